// The caller's C progress callback as the library's ProgressFn: called with the request's
// fraction done, inside a CallbackScope (so that calls which would wait for the request's own
// backend refuse instead), and a non-zero return cancels the request.
#pragma once

#include "capi/callback_scope.h"
#include "model/request_options.h"
#include "parakeet_capi.h"

namespace pk::capi {

// Empty when fn is NULL (no progress reports).
inline pk::ProgressFn progress_from(parakeet_progress_fn fn, void* user_data) {
    if (fn == nullptr) return {};
    return [fn, user_data](double fraction) {
        const CallbackScope inside;
        return fn(static_cast<float>(fraction), user_data) == 0;
    };
}

}  // namespace pk::capi
