// Dynamic batching of a context's offline requests through the C ABI (model/offline/
// request_batcher.h).
#include <memory>
#include <mutex>

#include "capi/batch_stats_json.h"
#include "capi/context.h"
#include "common/errors.h"
#include "common/json_writer.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace pk::capi {

std::shared_ptr<RequestBatcher> request_batcher(parakeet_ctx* ctx) {
    std::lock_guard<std::mutex> lock(ctx->batching_mu);
    return ctx->request_batcher;
}

}  // namespace pk::capi

extern "C" {

int parakeet_capi_set_request_batching(parakeet_ctx* ctx, int max_batch, int max_wait_ms) {
    return guarded<int>(ctx, -1, [&] {
        const pk::Model& model = pk::capi::asr_model(ctx);
        if (max_batch < 0 || max_wait_ms < 0)
            throw pk::InvalidArgument("set_request_batching: max_batch and max_wait_ms must not be negative");
        // A batch of one is no batching: 0 and 1 turn it off.
        std::shared_ptr<pk::RequestBatcher> batcher =
            max_batch > 1 ? std::make_shared<pk::RequestBatcher>(model, max_batch, max_wait_ms) : nullptr;
        std::lock_guard<std::mutex> lock(ctx->batching_mu);
        ctx->request_batcher = std::move(batcher);
        return 0;
    });
}

char* parakeet_capi_request_batching_stats_json(parakeet_ctx* ctx) {
    return guarded<char*>(ctx, nullptr, [&] {
        pk::capi::asr_model(ctx);
        const std::shared_ptr<pk::RequestBatcher> batcher = pk::capi::request_batcher(ctx);
        pk::JsonWriter j;
        j.begin_object();
        j.key("max_batch").value(batcher ? batcher->max_batch() : 0);
        j.key("max_wait_ms").value(batcher ? batcher->max_wait_ms() : 0);
        const pk::RequestBatcher::Stats st = batcher ? batcher->stats() : pk::RequestBatcher::Stats();
        pk::capi::write_batch_stats(j, st.batch_sizes, st.waited_ms_max, st.waited_ms_total);
        j.key("unbatched").value(st.unbatched);
        j.end_object();
        return pk::capi::to_c_string(j.str());
    });
}

}  // extern "C"
