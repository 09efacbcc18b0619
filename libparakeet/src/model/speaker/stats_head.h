// The head of the 2-D speaker encoders (WeSpeaker's ResNet34, 3D-Speaker's ERes2Net): temporal
// statistics pooling (TSTP) of the last map, then the embedding Linear.
//
//   pooling   per channel c and frequency bin f of the map [T, F, C]: the time mean and the
//             unbiased std sqrt(var + var_eps), flattened channel-major (c * F + f), the means
//             then the stds: 2 * C * F values
//   seg       Linear(2 * C * F -> embedding_dim) (any matmul type), with an F32 bias
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gguf/gguf_reader.h"
#include "kernels/matmul.h"
#include "model/tensor_loader.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

class StatsHead {
public:
    StatsHead() = default;
    // The Linear `weight` [dim, 2 * channels * bins] and `bias` [dim] for a map of `channels`
    // channels and `bins` frequency bins from `n_mels`-bin features (named in the message).
    // Throws ModelError when a tensor is missing or its shape does not fit.
    static StatsHead load(const GgufReader& gguf, const TensorLoader& t, const std::string& weight,
                          const std::string& bias, int64_t channels, int64_t bins, int64_t n_mels, float var_eps);

    int64_t embedding_dim() const { return seg_->n(); }

    // out[embedding_dim] from the map x [T, F, C] (T >= 2, F and C as loaded).
    void forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, float* out) const;

private:
    std::shared_ptr<const kernels::PackedWeights> seg_;
    const float* bias_ = nullptr;
    int64_t channels_ = 0, bins_ = 0;
    float var_eps_ = 1e-8f;
};

}  // namespace pk::speaker
