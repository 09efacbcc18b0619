// parakeet_ctx, the C ABI's handle, and the error bookkeeping every entry point shares.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "model/model.h"

struct parakeet_ctx {
    std::unique_ptr<pk::Model> model;

    // The message of the most recently finished call on this context ("" after a success).
    std::mutex error_mu;
    std::string last_error;
    // What parakeet_capi_last_error() last returned: a copy, so the pointer stays valid
    // while other threads keep finishing calls.
    std::string returned_error;
};

namespace pk::capi {

// Records the outcome of a call: on the calling thread (exact, read by
// parakeet_capi_thread_last_error) and, when ctx is not NULL, on the context.
void set_error(parakeet_ctx* ctx, const std::string& message);
void clear_error(parakeet_ctx* ctx);

// The calling thread's last error ("" when its last call succeeded).
const std::string& thread_error();

// Runs `body` (which returns a result of type R), turning every exception into an error
// recorded by set_error and the `failure` result. A success clears the errors.
template <class R, class Body>
R guarded(parakeet_ctx* ctx, R failure, Body&& body) noexcept {
    try {
        R result = body();
        clear_error(ctx);
        return result;
    } catch (const std::bad_alloc&) {
        set_error(ctx, "out of memory");
    } catch (const std::exception& e) {
        set_error(ctx, e.what());
    } catch (...) {
        set_error(ctx, "unknown error");
    }
    return failure;
}

// A malloc'd copy of s for the caller (freed with parakeet_capi_free_string). Throws
// std::bad_alloc.
char* to_c_string(const std::string& s);

}  // namespace pk::capi
