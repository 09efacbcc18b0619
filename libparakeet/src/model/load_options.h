// The choices a model is loaded with. The C ABI fills them once (capi/load_options_json.h: the
// environment's PARAKEET_* variables first, then parakeet_capi_load_with's JSON) and passes
// them down; nothing below the C ABI reads the environment.
#pragma once

#include <optional>
#include <string>

#include "model/encoder/attention_setting.h"
#include "runtime/cpu_features.h"

namespace pk {

struct LoadOptions {
    // The kernels' instruction-set level; unset: the CPU's highest. A level above the CPU's is
    // refused at load (Unsupported).
    std::optional<IsaLevel> isa;
    // The attention requests use unless their options say otherwise (set_attention changes it).
    AttentionSetting attention = AttentionSetting::automatic();
    // A quantised model quantises its remaining F32 matrices to Q8_0 at load (model/layers/q8_at_load.h).
    bool q8_all = true;
    // ... and the subsampling's pointwise convolutions too (opt-in).
    bool q8_subsampling = false;
    // An f32/f16 model's encoder matrices become bfloat16 (model/layers/bf16_at_load.h);
    // needs AVX512_BF16 at the avx512 level (Unsupported elsewhere).
    bool bf16 = false;
    // The context's compute-thread budget: requests run on that many threads, and
    // set_concurrency(K, threads_each <= 0) divides it among K backends. 0: the process-wide
    // default (default_thread_count()).
    int threads = 0;
    // Which component of a bundle to load, by name (model/bundle/bundle.h); "": the default
    // choice (the only asr component, else the only loadable one). The C ABI's loader
    // (capi/context_loader.h) reads it and refuses it for a file that is not a bundle; the model
    // loaders themselves are handed the component's reader.
    std::string component;
};

}  // namespace pk
