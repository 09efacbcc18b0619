/*
 * parakeet — C ABI of libparakeet.
 *
 * This header is the library's only public interface. Every function is callable from C,
 * never throws, and reports failure through its return value (NULL or non-zero).
 */
#ifndef PARAKEET_CAPI_H
#define PARAKEET_CAPI_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define PARAKEET_API __declspec(dllexport)
#else
#define PARAKEET_API __attribute__((visibility("default")))
#endif

/* Version of this ABI. Incremented when a function's signature or meaning changes. */
#define PARAKEET_CAPI_ABI_VERSION 1

/* Returns PARAKEET_CAPI_ABI_VERSION as compiled into the library. Thread-safe. */
PARAKEET_API int parakeet_capi_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif /* PARAKEET_CAPI_H */
