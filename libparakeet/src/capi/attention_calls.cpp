// Choosing a context's attention through the C ABI.
#include <string>

#include "capi/context.h"
#include "common/errors.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

// The C ABI's (left, right) pair as a setting: (0, 0) auto, (-1, -1) full, both > 0 local.
pk::AttentionSetting attention_from_pair(int left, int right) {
    if (left == 0 && right == 0) return pk::AttentionSetting::automatic();
    if (left == -1 && right == -1) return pk::AttentionSetting::full();
    if (left > 0 && right > 0) return pk::AttentionSetting::local(left, right);
    throw pk::InvalidArgument("invalid attention context (" + std::to_string(left) + ", " + std::to_string(right) +
                           "): use (0, 0) for auto, (-1, -1) for full, or left > 0 and right > 0 for local");
}

}  // namespace

extern "C" {

int parakeet_capi_set_attention_context(parakeet_ctx* ctx, int left, int right) {
    return guarded<int>(ctx, -1, [&] {
        pk::capi::asr_model(ctx).set_attention(attention_from_pair(left, right));
        return 0;
    });
}

}  // extern "C"
