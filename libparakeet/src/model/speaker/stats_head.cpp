#include "model/speaker/stats_head.h"

#include <cmath>

#include "common/errors.h"
#include "model/speaker/vector_math.h"

namespace pk::speaker {

StatsHead StatsHead::load(const GgufReader& gguf, const TensorLoader& t, const std::string& weight,
                          const std::string& bias, int64_t channels, int64_t bins, int64_t n_mels, float var_eps) {
    const GgufTensor* w = gguf.find_tensor(weight);
    if (w == nullptr) t.fail("missing tensor " + weight);
    const int64_t dim = w->ne[1], pooled = 2 * channels * bins;
    if (w->n_dims != 2 || w->ne[0] != pooled)
        t.fail(weight + " has shape " + w->shape_string() + ", the pooled statistics of " + std::to_string(n_mels) +
               " mel bins have " + std::to_string(pooled) + " values");
    if (!(var_eps >= 0)) t.fail("the pooling's variance floor is negative or NaN");
    const GgufTensor& checked = t.get(weight, {dim, pooled});
    StatsHead h;
    h.seg_ = std::make_shared<const kernels::PackedWeights>(TensorLoader::weight_type(checked), checked.data, dim,
                                                            pooled, t.level());
    t.release(checked);
    h.bias_ = t.f32(bias, {dim});
    h.channels_ = channels;
    h.bins_ = bins;
    h.var_eps_ = var_eps;
    return h;
}

void StatsHead::forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, float* out) const {
    ArenaScope scope(arena);
    const int64_t C = channels_, F = bins_;
    float* pooled = arena.alloc_array<float>(static_cast<size_t>(2 * C * F));
    // Element (t, f, c) is x[t * F * C + f * C + c]: column f * C + c of a [T, F * C] matrix.
    double* mean = arena.alloc_array<double>(static_cast<size_t>(C * F));
    double* dev = arena.alloc_array<double>(static_cast<size_t>(C * F));
    column_moments(team, x, T, F * C, mean, dev);
    for (int64_t c = 0; c < C; ++c) {
        for (int64_t f = 0; f < F; ++f) {
            pooled[c * F + f] = static_cast<float>(mean[f * C + c]);
            pooled[(C + c) * F + f] =
                static_cast<float>(std::sqrt(dev[f * C + c] / static_cast<double>(T - 1) + var_eps_));
        }
    }
    kernels::matmul(team, arena, pooled, 1, 2 * C * F, *seg_, bias_, out);
}

}  // namespace pk::speaker
