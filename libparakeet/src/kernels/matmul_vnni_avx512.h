// The integer product step of the AVX-512 VNNI matmul tiles (q8_0: matmul_kernels_avx512.cpp,
// the K-quants: matmul_kquant_avx512.cpp). Included only by *_avx512.cpp files; `static` so
// that no copy compiled with AVX-512 can be picked by the linker elsewhere.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace pk::kernels::matmul_detail {

// acc += u * q over one quad of k for 16 outputs: u the 16 outputs' unsigned weight quads, q
// four signed activations read from memory and broadcast by the instruction itself (EVEX
// embedded broadcast, {1to16}). GCC does not fold a _mm512_set1_epi32 into vpdpbusd; the
// separate vpbroadcastd is one more uop per product, and the tiles are then bound by the
// uops the core issues per cycle rather than by its two vpdpbusd pipes (q8_0 tile, 1 thread,
// an Intel Xeon with AVX-512 VNNI: 531 -> 575 GFLOP/s). The integer result is the same.
static inline __m512i dpbusd_broadcast(__m512i acc, __m512i u, const int8_t* q) {
    __asm__("vpdpbusd %[q]%{1to16%}, %[u], %[acc]"
            : [acc] "+v"(acc)
            : [u] "v"(u), [q] "m"(*reinterpret_cast<const int32_t*>(q)));
    return acc;
}

}  // namespace pk::kernels::matmul_detail
