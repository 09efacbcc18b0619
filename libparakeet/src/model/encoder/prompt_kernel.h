// PromptKernel: the language prompt of NeMo's prompt-conditioned models (PromptStreamingMixin,
// rnnt_bpe_models_prompt.py / hybrid_rnnt_ctc_bpe_models_prompt.py). Every encoder output frame
// x [d_model] is concatenated with the one-hot vector of the locale's prompt id [num_prompts] and
// mapped back: y = W2 · relu(W0 · [x, onehot] + b0) + b2, before any head (the transducer's
// joint and the CTC head alike), offline and in each cache-aware streaming step.
#pragma once

#include <cstdint>

#include "model/layers/linear.h"
#include "model/model_config.h"

namespace pk {

class PromptKernel {
public:
    // prompt_kernel.0 [2 d, d + P] and prompt_kernel.2 [d, 2 d] with their biases (F32 or any
    // type Linear takes). Throws ModelError naming a missing or misshapen tensor.
    PromptKernel(const TensorLoader& t, const ModelConfig& cfg);

    // x [T, d_model] in place, for prompt id `prompt` (0 <= prompt < num_prompts).
    void apply(ThreadTeam& team, Arena& arena, float* x, int64_t T, int prompt) const;

private:
    Linear in_, out_;
    int64_t d_ = 0;
    int64_t num_prompts_ = 0;
};

}  // namespace pk
