#include "model/encoder/prompt_kernel.h"

#include <algorithm>

#include "model/gguf_schema.h"
#include "runtime/arena.h"

namespace pk {

PromptKernel::PromptKernel(const TensorLoader& t, const ModelConfig& cfg)
    : d_(cfg.enc.d_model), num_prompts_(cfg.prompt.num_prompts) {
    in_ = Linear::load(t, schema::kPromptKernelIn, 2 * d_, d_ + num_prompts_, true);
    out_ = Linear::load(t, schema::kPromptKernelOut, d_, 2 * d_, true);
}

void PromptKernel::apply(ThreadTeam& team, Arena& arena, float* x, int64_t T, int prompt) const {
    if (T <= 0) return;
    ArenaScope scope(arena);
    // The concatenation itself, as NeMo forms it: the one-hot's zeros add nothing to a product,
    // so the hidden values are NeMo's up to the order of the sums.
    const int64_t in = d_ + num_prompts_;
    float* cat = arena.alloc_array<float>(static_cast<size_t>(T * in));
    for (int64_t t = 0; t < T; ++t) {
        float* row = cat + t * in;
        std::copy_n(x + t * d_, d_, row);
        std::fill(row + d_, row + in, 0.0f);
        row[d_ + prompt] = 1.0f;
    }
    float* hidden = arena.alloc_array<float>(static_cast<size_t>(T * 2 * d_));
    in_.forward(team, arena, cat, T, hidden);
    for (int64_t i = 0; i < T * 2 * d_; ++i) hidden[i] = std::max(hidden[i], 0.0f);
    out_.forward(team, arena, hidden, T, x);
}

}  // namespace pk
