#include "model/speaker/tdnn_layers.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/errors.h"
#include "kernels/quantize_q8_0.h"
#include "model/gguf_schema.h"
#include "model/layers/q8_at_load.h"

namespace pk::speaker {

namespace {

constexpr float kBatchNormEps = 1e-5f;  // torch.nn.BatchNorm1d's default, which SpeechBrain keeps

// Reflect padding: index -1 is 1 and index T is T - 2 (the edge frame is not repeated).
int64_t reflect(int64_t i, int64_t T) {
    if (i < 0) return -i;
    if (i >= T) return 2 * (T - 1) - i;
    return i;
}

// Below this many frames the unfolding is too small to be worth waking the team.
constexpr int64_t kMinFramesPerThread = 16;

}  // namespace

Conv1dSame Conv1dSame::load(const TensorLoader& t, const std::string& prefix, int64_t in, int64_t out,
                            int kernel, int dilation) {
    const std::string module = prefix + ".conv";
    if (kernel < 1 || kernel % 2 == 0) t.fail(schema::weight(module) + ": kernel " + std::to_string(kernel) +
                                              " is not odd");
    const GgufTensor& w = t.get(schema::weight(module), {out, in, kernel});
    Conv1dSame c;
    if (w.type == GgmlType::F32 && t.q8_at_load() && (in * kernel) % kernels::kQ8_0BlockValues == 0)
        c.weight_ = std::make_shared<const kernels::PackedWeights>(
            q8_0_at_load(reinterpret_cast<const float*>(w.data), out, in * kernel, t.level()));
    else
        c.weight_ = std::make_shared<const kernels::PackedWeights>(TensorLoader::weight_type(w), w.data, out,
                                                                   in * kernel, t.level());
    t.release(w);
    c.bias_ = t.f32(schema::bias(module), {out});
    c.in_ = in;
    c.out_ = out;
    c.kernel_ = kernel;
    c.dilation_ = dilation;
    return c;
}

void Conv1dSame::forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t ldx, float* y,
                         int64_t ldy) const {
    if (T < min_frames())  // the caller checks the network's minimum first (EcapaTdnn::min_frames)
        throw std::invalid_argument("Conv1dSame: " + std::to_string(T) + " frames, the padding needs " +
                                    std::to_string(min_frames()));
    if (kernel_ == 1 && ldx == in_) {
        kernels::matmul(team, arena, x, T, in_, *weight_, bias_, y, ldy);
        return;
    }
    ArenaScope scope(arena);
    const int64_t cols = in_ * kernel_;
    float* unfolded = arena.alloc_array<float>(static_cast<size_t>(T * cols));
    const int64_t pad = (kernel_ - 1) / 2 * dilation_;
    team.run([&](int ith, int nth) {
        const int64_t parts = std::min<int64_t>(nth, std::max<int64_t>(1, T / kMinFramesPerThread));
        if (ith >= parts) return;
        for (int64_t tt = T * ith / parts; tt < T * (ith + 1) / parts; ++tt) {
            float* row = unfolded + tt * cols;
            for (int j = 0; j < kernel_; ++j) {
                const float* src = x + reflect(tt + j * dilation_ - pad, T) * ldx;
                for (int64_t c = 0; c < in_; ++c) row[c * kernel_ + j] = src[c];
            }
        }
    });
    kernels::matmul(team, arena, unfolded, T, cols, *weight_, bias_, y, ldy);
}

BatchNormEval BatchNormEval::load(const TensorLoader& t, const std::string& prefix, int64_t channels) {
    const float* weight = t.f32(schema::weight(prefix), {channels});
    const float* bias = t.f32(schema::bias(prefix), {channels});
    const float* mean = t.f32(prefix + ".running_mean", {channels});
    const float* var = t.f32(prefix + ".running_var", {channels});
    BatchNormEval bn;
    bn.scale_.resize(channels);
    bn.shift_.resize(channels);
    for (int64_t c = 0; c < channels; ++c) {
        if (!(var[c] >= 0)) t.fail(prefix + ".running_var has a negative or NaN value");
        bn.scale_[c] = weight[c] / std::sqrt(var[c] + kBatchNormEps);
        bn.shift_[c] = bias[c] - mean[c] * bn.scale_[c];
    }
    return bn;
}

void BatchNormEval::apply(float* x, int64_t T, int64_t ld, bool relu) const {
    const int64_t C = channels();
    for (int64_t t = 0; t < T; ++t) {
        float* row = x + t * ld;
        for (int64_t c = 0; c < C; ++c) {
            const float v = relu ? std::max(row[c], 0.0f) : row[c];
            row[c] = v * scale_[c] + shift_[c];
        }
    }
}

TdnnBlock TdnnBlock::load(const TensorLoader& t, const std::string& prefix, int64_t in, int64_t out, int kernel,
                          int dilation) {
    TdnnBlock b;
    b.conv_ = Conv1dSame::load(t, prefix + ".conv", in, out, kernel, dilation);
    b.norm_ = BatchNormEval::load(t, prefix + ".norm.norm", out);
    return b;
}

}  // namespace pk::speaker
