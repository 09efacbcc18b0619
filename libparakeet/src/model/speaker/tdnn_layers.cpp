#include "model/speaker/tdnn_layers.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/errors.h"
#include "kernels/matmul_q8_rows.h"
#include "kernels/quantize_q8_0.h"
#include "kernels/round_up.h"
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
    const int64_t cols = in * kernel;
    c.cols_ = cols;
    if (w.type == GgmlType::F32) {
        // Columns in tap-major order, j * in + c, so that the unfolding copies each tap's
        // channels as one run. Quantised at load, a row is padded with zero columns to whole
        // Q8_0 blocks (ECAPA's block 0: 80 mels x 5 taps = 400 columns, 416 padded), which the
        // unfolding fills with zeros: 4 % more products for int8 ones.
        if (t.q8_at_load()) c.cols_ = kernels::round_up(cols, kernels::kQ8_0BlockValues);
        const float* w32 = reinterpret_cast<const float*>(w.data);
        std::vector<float> tap_major(static_cast<size_t>(out * c.cols_), 0.0f);
        for (int64_t o = 0; o < out; ++o)
            for (int64_t ch = 0; ch < in; ++ch)
                for (int j = 0; j < kernel; ++j) tap_major[o * c.cols_ + j * in + ch] = w32[(o * in + ch) * kernel + j];
        c.tap_major_ = true;
        c.weight_ = std::make_shared<const kernels::PackedWeights>(
            t.q8_at_load() ? q8_0_at_load(tap_major.data(), out, c.cols_, t.level())
                           : kernels::PackedWeights(kernels::WeightType::F32, tap_major.data(), out, cols, t.level()));
    } else {
        c.weight_ = std::make_shared<const kernels::PackedWeights>(TensorLoader::weight_type(w), w.data, out, cols,
                                                                   t.level());
    }
    t.release(w);
    c.q8_map_ = kernels::q8_blocks_are_taps(*c.weight_, c.tap_major_, kernel, in);
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
    if (kernel_ == 1 && ldx == in_ && cols_ == in_) {
        kernels::matmul(team, arena, x, T, in_, *weight_, bias_, y, ldy);
        return;
    }
    ArenaScope scope(arena);
    const int64_t cols = cols_;
    const int64_t pad = (kernel_ - 1) / 2 * dilation_;
    if (q8_map_) {
        const kernels::Q8Rows map = kernels::alloc_q8_rows(arena, T, in_);
        kernels::quantize_q8_rows(weight_->level(), team, x, T, in_, ldx, map);
        if (kernel_ == 1) {
            kernels::matmul_q8_rows(team, arena, map, T, cols, *weight_, bias_, y, ldy);
            return;
        }
        int64_t* sources = arena.alloc_array<int64_t>(static_cast<size_t>(T * kernel_));
        for (int64_t tt = 0; tt < T; ++tt)
            for (int j = 0; j < kernel_; ++j) sources[tt * kernel_ + j] = reflect(tt + j * dilation_ - pad, T);
        kernels::matmul_q8_gather(team, arena, {map, in_, sources}, T, cols, *weight_, bias_, y, ldy);
        return;
    }
    float* unfolded = arena.alloc_array<float>(static_cast<size_t>(T * cols));
    team.run([&](int ith, int nth) {
        const int64_t parts = std::min<int64_t>(nth, std::max<int64_t>(1, T / kMinFramesPerThread));
        if (ith >= parts) return;
        for (int64_t tt = T * ith / parts; tt < T * (ith + 1) / parts; ++tt) {
            float* row = unfolded + tt * cols;
            std::fill(row + in_ * kernel_, row + cols, 0.0f);  // the zero columns that pad Q8_0 rows
            for (int j = 0; j < kernel_; ++j) {
                const float* src = x + reflect(tt + j * dilation_ - pad, T) * ldx;
                if (tap_major_)
                    std::copy_n(src, in_, row + j * in_);
                else  // PyTorch's channel-major columns
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

void BatchNormEval::apply(ThreadTeam& team, float* x, int64_t T, int64_t ld, bool relu) const {
    parallel_for(team, T, kMinFramesPerThread, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) apply_row(x + t * ld, relu);
    });
}

TdnnBlock TdnnBlock::load(const TensorLoader& t, const std::string& prefix, int64_t in, int64_t out, int kernel,
                          int dilation) {
    TdnnBlock b;
    b.conv_ = Conv1dSame::load(t, prefix + ".conv", in, out, kernel, dilation);
    b.norm_ = BatchNormEval::load(t, prefix + ".norm.norm", out);
    return b;
}

}  // namespace pk::speaker
