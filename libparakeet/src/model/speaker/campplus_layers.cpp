#include "model/speaker/campplus_layers.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/errors.h"

namespace pk::speaker {

namespace {

// Unfolded values per block of output positions (2 MB), and the fewest positions in a block.
constexpr int64_t kBlockValues = int64_t{1} << 19;
constexpr int64_t kMinBlockRows = 256;
// Below this many rows per thread a pass is not worth waking the team.
constexpr int64_t kMinRowsPerThread = 32;

}  // namespace

KernelShape kernel_shape(const GgufReader& gguf, const TensorLoader& t, const std::string& name) {
    const GgufTensor* w = gguf.find_tensor(name);
    if (w == nullptr) t.fail("missing tensor " + name);
    switch (w->n_dims) {
    case 2: return {w->ne[1], w->ne[0], 1, 1};
    case 3: return {w->ne[2], w->ne[1], 1, static_cast<int>(w->ne[0])};
    case 4: return {w->ne[3], w->ne[2], static_cast<int>(w->ne[1]), static_cast<int>(w->ne[0])};
    default: t.fail(name + " has shape " + w->shape_string() + ", expected a convolution weight");
    }
}

ConvGemm ConvGemm::load(const GgufReader& gguf, const TensorLoader& t, const std::string& weight,
                        const std::string& bias, int64_t in, ConvGeometry geometry) {
    const KernelShape s = kernel_shape(gguf, t, weight);
    if (s.in != in)
        t.fail(weight + " takes " + std::to_string(s.in) + " channels, the network gives it " + std::to_string(in));
    if (s.kh < 1 || s.kw < 1 || s.out < 1) t.fail(weight + " has an empty kernel");
    ConvGemm c;
    c.in_ = in;
    c.out_ = s.out;
    c.kh_ = s.kh;
    c.kw_ = s.kw;
    c.g_ = geometry;
    const int64_t taps = static_cast<int64_t>(s.kh) * s.kw;
    if (taps == 1) {
        const GgufTensor& w = t.get(weight, {s.out, in});
        c.weight_ = std::make_shared<const kernels::PackedWeights>(TensorLoader::weight_type(w), w.data, s.out, in,
                                                                   t.level());
        t.release(w);
    } else {
        // [out, in, kh, kw] -> [out, kh, kw, in]: each tap reads one contiguous channel run.
        const float* w = t.f32(weight, {s.out, in, s.kh, s.kw});
        std::vector<float> reordered(static_cast<size_t>(s.out * taps * in));
        for (int64_t o = 0; o < s.out; ++o)
            for (int64_t ci = 0; ci < in; ++ci)
                for (int64_t k = 0; k < taps; ++k)
                    reordered[(o * taps + k) * in + ci] = w[(o * in + ci) * taps + k];
        c.weight_ = std::make_shared<const kernels::PackedWeights>(kernels::WeightType::F32, reordered.data(), s.out,
                                                                   taps * in, t.level());
    }
    if (!bias.empty()) c.bias_ = t.f32(bias, {s.out});
    return c;
}

void ConvGemm::unfold(const float* x, int64_t H, int64_t W, int64_t ldx, int64_t first, int64_t rows,
                      float* cols) const {
    const int64_t OW = out_w(W), K = static_cast<int64_t>(kh_) * kw_ * in_;
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t oh = (first + r) / OW, ow = (first + r) % OW;
        float* row = cols + r * K;
        for (int i = 0; i < kh_; ++i) {
            const int64_t ih = oh * g_.stride_h + i - g_.pad_h;
            for (int j = 0; j < kw_; ++j, row += in_) {
                const int64_t iw = ow * g_.stride_w + static_cast<int64_t>(j) * g_.dilation_w - g_.pad_w;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) std::fill(row, row + in_, 0.0f);
                else std::memcpy(row, x + (ih * W + iw) * ldx, static_cast<size_t>(in_) * sizeof(float));
            }
        }
    }
}

void ConvGemm::forward_rows(Arena& arena, const float* x, int64_t H, int64_t W, int64_t ldx, int64_t first,
                            int64_t last, float* y, int64_t ldy, bool relu) const {
    const bool direct = kh_ == 1 && kw_ == 1 && g_.stride_h == 1 && g_.stride_w == 1 && g_.pad_h == 0 &&
                        g_.pad_w == 0 && ldx == in_;
    const int64_t K = static_cast<int64_t>(kh_) * kw_ * in_;
    const int64_t block = direct ? last - first : std::max(kMinBlockRows, kBlockValues / K);
    ThreadTeam alone(1);
    for (int64_t r0 = first; r0 < last; r0 += block) {
        const int64_t rows = std::min(block, last - r0);
        ArenaScope scope(arena);
        const float* src = x + r0 * ldx;
        if (!direct) {
            float* cols = arena.alloc_array<float>(static_cast<size_t>(rows * K));
            unfold(x, H, W, ldx, r0, rows, cols);
            src = cols;
        }
        float* dst = y + r0 * ldy;
        kernels::matmul(alone, arena, src, rows, K, *weight_, bias_, dst, ldy, kernels::MatmulPath::Gemm);
        if (relu)
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t c = 0; c < out_; ++c) dst[r * ldy + c] = std::max(dst[r * ldy + c], 0.0f);
    }
}

void ConvGemm::forward(const TeamScratch& scratch, const float* x, int64_t H, int64_t W, int64_t ldx, float* y,
                       int64_t ldy, bool relu) const {
    const int64_t positions = out_h(H) * out_w(W);
    ThreadTeam& team = scratch.team();
    const int64_t parts = std::min<int64_t>(team.size(), std::max<int64_t>(1, positions / kMinRowsPerThread));
    if (parts == 1) {
        forward_rows(scratch.arena(0), x, H, W, ldx, 0, positions, y, ldy, relu);
        return;
    }
    team.run([&](int ith, int) {
        if (ith < parts)
            forward_rows(scratch.arena(ith), x, H, W, ldx, positions * ith / parts, positions * (ith + 1) / parts, y,
                         ldy, relu);
    });
}

TeamScratch::TeamScratch(ThreadTeam& team, Arena& caller) : team_(team), caller_(caller) {
    for (int i = 1; i < team.size(); ++i) own_.push_back(std::make_unique<Arena>());
}

ChannelAffine ChannelAffine::fold(const TensorLoader& t, const std::string& what, const float* weight,
                                  const float* bias, const float* mean, const float* var, int64_t channels,
                                  float eps) {
    ChannelAffine a;
    a.scale_.resize(static_cast<size_t>(channels));
    a.shift_.resize(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
        if (!(var[c] >= 0)) t.fail(what + " running variance has a negative or NaN value");
        const float scale = (weight ? weight[c] : 1.0f) / std::sqrt(var[c] + eps);
        a.scale_[c] = scale;
        a.shift_[c] = (bias ? bias[c] : 0.0f) - mean[c] * scale;
    }
    return a;
}

ChannelAffine ChannelAffine::load(const TensorLoader& t, const std::string& prefix, int64_t channels, float eps) {
    return fold(t, prefix, t.f32(prefix + ".weight", {channels}), t.f32(prefix + ".bias", {channels}),
                t.f32(prefix + ".running_mean", {channels}), t.f32(prefix + ".running_var", {channels}), channels,
                eps);
}

ChannelAffine ChannelAffine::load_statistics(const TensorLoader& t, const std::string& mean, const std::string& var,
                                             int64_t channels, float eps) {
    return fold(t, var, nullptr, nullptr, t.f32(mean, {channels}), t.f32(var, {channels}), channels, eps);
}

void ChannelAffine::apply(ThreadTeam& team, const float* x, int64_t T, int64_t ldx, float* y, int64_t ldy,
                          bool relu) const {
    const int64_t C = channels();
    for_rows(team, T, kMinRowsPerThread, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const float* src = x + t * ldx;
            float* dst = y + t * ldy;
            for (int64_t c = 0; c < C; ++c) {
                const float v = src[c] * scale_[c] + shift_[c];
                dst[c] = relu ? std::max(v, 0.0f) : v;
            }
        }
    });
}

}  // namespace pk::speaker
