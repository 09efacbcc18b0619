// Backend pools and thread counts through the C ABI.
#include "capi/callback_scope.h"
#include "capi/context.h"
#include "capi/environment.h"
#include "common/errors.h"
#include "parakeet_capi.h"
#include "runtime/thread_budget.h"

using pk::capi::guarded;

extern "C" {

int parakeet_capi_set_concurrency(parakeet_ctx* ctx, int backends, int threads_each) {
    return guarded<int>(ctx, -1, [&] {
        if (ctx != nullptr && ctx->kind == pk::ModelKind::Diarization)
            return ctx->diar->set_concurrency(backends, threads_each);
        return pk::capi::asr_model(ctx).set_concurrency(backends, threads_each);
    });
}

long long parakeet_capi_pool_working_set_bytes(parakeet_ctx* ctx) {
    return guarded<long long>(ctx, -1, [&] {
        if (ctx != nullptr && ctx->kind == pk::ModelKind::Diarization)
            return static_cast<long long>(ctx->diar->pool_working_set_bytes());
        return static_cast<long long>(pk::capi::asr_model(ctx).pool_working_set_bytes());
    });
}

int parakeet_capi_set_threads(int n_threads) {
    return guarded<int>(nullptr, -1, [&] {
        // The callback's request may hold the default backend, whose lock this waits for.
        if (pk::capi::CallbackScope::active())
            throw pk::InvalidArgument("set_threads cannot be called from inside a progress callback");
        pk::capi::apply_thread_environment();
        pk::Backend& b = pk::default_backend();
        std::lock_guard<std::mutex> lock(b.mutex());
        b.set_threads(n_threads > 0 ? n_threads : pk::default_thread_count());
        return b.n_threads();
    });
}

}  // extern "C"
