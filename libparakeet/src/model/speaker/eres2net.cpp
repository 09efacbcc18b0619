#include "model/speaker/eres2net.h"

#include <algorithm>
#include <string>

#include "common/errors.h"
#include "kernels/ops_activation.h"
#include "model/speaker/voicedetect_schema.h"

namespace pk::speaker {

namespace {

namespace vd = schema::voicedetect;

constexpr int64_t kGrain = 1 << 14;  // elements per thread below which an element-wise pass stays on one

void clamp_range(ThreadTeam& team, float* x, int64_t n, float hi) {
    parallel_for(team, n, kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) x[i] = std::min(std::max(x[i], 0.0f), hi);
    });
}

// dst[p * ld_dst + d0 + j] = src[p * ld_src + s0 + j] for p < pixels, j < width.
void copy_channels(ThreadTeam& team, const float* src, int64_t ld_src, int64_t s0, float* dst, int64_t ld_dst,
                   int64_t d0, int64_t width, int64_t pixels) {
    parallel_for(team, pixels, std::max<int64_t>(1, kGrain / width), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p)
            std::copy(src + p * ld_src + s0, src + p * ld_src + s0 + width, dst + p * ld_dst + d0);
    });
}

}  // namespace

// A channels-last map [T, F, C] in the forward's arena.
struct ERes2Net::Map {
    float* data;
    int64_t T, F, C;
    int64_t size() const { return T * F * C; }
};

// The manifest's convolutions, handed out in order.
class ERes2Net::Cursor {
public:
    Cursor(const GgufReader& g, const TensorLoader& t) : g_(g), t_(t) {
        for (const char* key : {vd::kEres2netConvWeight, vd::kEres2netConvBias, vd::kEres2netConvStride})
            if (!g.has_key(key)) t.fail(std::string("missing key ") + key);
        weights_ = g.get_string_array(vd::kEres2netConvWeight);
        biases_ = g.get_string_array(vd::kEres2netConvBias);
        strides_ = g.get_i64_array(vd::kEres2netConvStride);
        if (biases_.size() != weights_.size() || strides_.size() != weights_.size())
            t.fail(std::string(vd::kEres2netConvWeight) + ", _bias and _stride list " + std::to_string(weights_.size()) +
                   ", " + std::to_string(biases_.size()) + " and " + std::to_string(strides_.size()) + " convolutions");
    }

    // The next convolution, of `in` input channels.
    Conv2dGemm operator()(int64_t in) {
        if (next_ >= weights_.size())
            t_.fail(std::string(vd::kEres2netConvWeight) + " lists " + std::to_string(weights_.size()) +
                    " convolutions, the network runs more");
        const int64_t stride = strides_[next_];
        if (stride < 1 || stride > 4) t_.fail(weights_[next_] + ": stride " + std::to_string(stride) + " is not 1 to 4");
        const Conv2dGemm c =
            Conv2dGemm::load_square(g_, t_, weights_[next_], biases_[next_], in, static_cast<int>(stride));
        ++next_;
        return c;
    }
    // The same, checked to give `out` channels.
    Conv2dGemm operator()(int64_t in, int64_t out) {
        const std::string name = next_ < weights_.size() ? weights_[next_] : "";
        Conv2dGemm c = (*this)(in);
        if (c.out() != out)
            t_.fail(name + " gives " + std::to_string(c.out()) + " channels, the network needs " + std::to_string(out));
        return c;
    }
    void finish() const {
        if (next_ != weights_.size())
            t_.fail(std::string(vd::kEres2netConvWeight) + " lists " + std::to_string(weights_.size()) +
                    " convolutions, the network runs " + std::to_string(next_));
    }
    const TensorLoader& loader() const { return t_; }

private:
    const GgufReader& g_;
    const TensorLoader& t_;
    std::vector<std::string> weights_, biases_;
    std::vector<int64_t> strides_;
    size_t next_ = 0;
};

ERes2Net::Aff ERes2Net::load_aff(Cursor& next, int64_t channels) {
    Aff a;
    a.squeeze = next(2 * channels);
    a.expand = next(a.squeeze.out(), channels);
    return a;
}

ERes2Net::Block ERes2Net::load_block(Cursor& next, int64_t in, bool aff, int64_t scale) {
    Block b;
    b.conv1 = next(in);
    if (b.conv1.out() % scale != 0)
        next.loader().fail("a block's first convolution gives " + std::to_string(b.conv1.out()) +
                           " channels, not a multiple of the scale " + std::to_string(scale));
    const int64_t width = b.conv1.out() / scale;
    for (int64_t i = 0; i < scale; ++i) {
        if (i > 0 && aff) b.fuse.push_back(load_aff(next, width));
        b.convs.push_back(next(width, width));
    }
    b.conv3 = next(b.conv1.out());
    // As 3D-Speaker's _make_layer: a shortcut convolution where the block changes the map's shape.
    b.has_shortcut = b.conv1.geometry().stride_t != 1 || in != b.conv3.out();
    if (b.has_shortcut) b.shortcut = next(in, b.conv3.out());
    return b;
}

ERes2Net ERes2Net::load(const GgufReader& gguf, const TensorLoader& t, int64_t n_mels) {
    ERes2Net n;
    n.n_mels_ = n_mels;
    n.kernels_ = &t.kernels();
    if (!gguf.has_key(vd::kEres2netSegWeight) || !gguf.has_key(vd::kEres2netSegBias) ||
        !gguf.has_key(vd::kEres2netNumBlocks))
        t.fail(std::string("missing key ") + vd::kEres2netSegWeight + ", " + vd::kEres2netSegBias + " or " +
               vd::kEres2netNumBlocks);
    const std::vector<int64_t> counts = gguf.get_i64_array(vd::kEres2netNumBlocks);
    if (counts.size() != 4 || *std::min_element(counts.begin(), counts.end()) < 1)
        t.fail(std::string(vd::kEres2netNumBlocks) + " must list 4 stages of at least one block");
    n.scale_ = gguf.has_key(vd::kEres2netScale) ? gguf.get_u32(vd::kEres2netScale) : 2;
    if (n.scale_ < 1 || n.scale_ > 64) t.fail(std::string(vd::kEres2netScale) + " is not 1 to 64");
    n.clamp_ = gguf.has_key(vd::kEres2netReluClamp) ? gguf.get_f32(vd::kEres2netReluClamp) : 20.0f;
    if (!(n.clamp_ > 0)) t.fail(std::string(vd::kEres2netReluClamp) + " is not positive");

    Cursor next(gguf, t);
    n.stem_ = next(1);
    int64_t channels[4], bins[4];
    int64_t in = n.stem_.out(), f = n.stem_.out_f(n_mels);
    for (int s = 0; s < 4; ++s) {
        for (int64_t i = 0; i < counts[s]; ++i) {
            n.stages_[s].push_back(load_block(next, in, /*aff=*/s >= 2, n.scale_));
            in = n.stages_[s].back().conv3.out();
            f = n.stages_[s].back().conv1.out_f(f);
        }
        channels[s] = in;
        bins[s] = f;
        if (s == 0) continue;
        // The bottom-up fusion into this stage's output, in the order the forward runs it.
        n.down_[s - 1] = next(channels[s - 1], channels[s]);
        if (n.down_[s - 1].out_f(bins[s - 1]) != bins[s])
            t.fail("fusion " + std::to_string(s) + ": the downsampled map does not match stage " +
                   std::to_string(s + 1) + "'s");
        n.fuse_[s - 1] = load_aff(next, channels[s]);
    }
    next.finish();
    if (bins[3] < 1) t.fail(std::to_string(n_mels) + " mel bins leave no frequency bin to pool");
    const float var_eps = gguf.has_key(vd::kEres2netVarEps) ? gguf.get_f32(vd::kEres2netVarEps) : 1e-8f;
    n.head_ = StatsHead::load(gguf, t, gguf.get_string(vd::kEres2netSegWeight), gguf.get_string(vd::kEres2netSegBias),
                              channels[3], bins[3], n_mels, var_eps);
    n.min_frames_ = 1;
    while (n.pooled_steps(n.min_frames_) < 2) ++n.min_frames_;
    return n;
}

int64_t ERes2Net::pooled_steps(int64_t T) const {
    T = stem_.out_t(T);
    for (const std::vector<Block>& stage : stages_)
        for (const Block& b : stage) T = b.conv1.out_t(T);
    return T;
}

ERes2Net::Map ERes2Net::run_conv(ThreadTeam& team, Arena& arena, const Conv2dGemm& c, const Map& x,
                                 bool relu) const {
    const Map y{nullptr, c.out_t(x.T), c.out_f(x.F), c.out()};
    float* data = arena.alloc_array<float>(static_cast<size_t>(y.size()));
    c.forward(team, arena, x.data, x.T, x.F, data, relu);
    return Map{data, y.T, y.F, y.C};
}

ERes2Net::Map ERes2Net::run_aff(ThreadTeam& team, Arena& arena, const Aff& a, const Map& x, const Map& y) const {
    Map out{arena.alloc_array<float>(static_cast<size_t>(x.size())), x.T, x.F, x.C};
    ArenaScope scope(arena);
    const int64_t pixels = x.T * x.F;
    Map both{arena.alloc_array<float>(static_cast<size_t>(2 * x.size())), x.T, x.F, 2 * x.C};
    copy_channels(team, x.data, x.C, 0, both.data, both.C, 0, x.C, pixels);
    copy_channels(team, y.data, y.C, 0, both.data, both.C, x.C, x.C, pixels);
    const Map hidden = run_conv(team, arena, a.squeeze, both);
    kernels::silu(*kernels_, team, hidden.data, hidden.size(), hidden.data);
    const Map z = run_conv(team, arena, a.expand, hidden);
    // With 1 + tanh(z) = 2 sigmoid(2 z) = 2 s: x (1 + tanh z) + y (1 - tanh z) = 2 (y + s (x - y)).
    parallel_for(team, z.size(), kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) z.data[i] *= 2.0f;
    });
    kernels::sigmoid(*kernels_, team, z.data, z.size(), z.data);
    parallel_for(team, out.size(), kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out.data[i] = 2.0f * (y.data[i] + z.data[i] * (x.data[i] - y.data[i]));
    });
    return out;
}

void ERes2Net::run_block(ThreadTeam& team, Arena& arena, const Block& b, const Map& x, const Map& y) const {
    ArenaScope scope(arena);
    const Map c1 = run_conv(team, arena, b.conv1, x);
    clamp_range(team, c1.data, c1.size(), clamp_);
    const int64_t width = c1.C / scale_, pixels = c1.T * c1.F;
    Map chunks{arena.alloc_array<float>(static_cast<size_t>(c1.size())), c1.T, c1.F, c1.C};  // the outputs side by side
    Map cur{arena.alloc_array<float>(static_cast<size_t>(pixels * width)), c1.T, c1.F, width};
    Map prev{arena.alloc_array<float>(static_cast<size_t>(pixels * width)), c1.T, c1.F, width};
    for (int64_t i = 0; i < scale_; ++i) {
        copy_channels(team, c1.data, c1.C, i * width, cur.data, width, 0, width, pixels);
        Map in = cur;
        if (i > 0 && !b.fuse.empty()) {
            in = run_aff(team, arena, b.fuse[i - 1], prev, cur);
        } else if (i > 0) {
            parallel_for(team, cur.size(), kGrain, [&](int64_t begin, int64_t end) {
                for (int64_t k = begin; k < end; ++k) cur.data[k] += prev.data[k];
            });
        }
        b.convs[i].forward(team, arena, in.data, in.T, in.F, prev.data, /*relu=*/false);
        clamp_range(team, prev.data, prev.size(), clamp_);
        copy_channels(team, prev.data, width, 0, chunks.data, chunks.C, i * width, width, pixels);
    }
    b.conv3.forward(team, arena, chunks.data, chunks.T, chunks.F, y.data, /*relu=*/false);
    const Map residual = b.has_shortcut ? run_conv(team, arena, b.shortcut, x) : x;
    parallel_for(team, y.size(), kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) y.data[k] = std::min(std::max(y.data[k] + residual.data[k], 0.0f), clamp_);
    });
}

ERes2Net::Map ERes2Net::run_stage(ThreadTeam& team, Arena& arena, const std::vector<Block>& stage,
                                  const Map& x) const {
    // The blocks' outputs take turns in two maps of the stage's output size.
    const Block& first = stage.front();
    const int64_t T = first.conv1.out_t(x.T), F = first.conv1.out_f(x.F), C = first.conv3.out();
    Map maps[2] = {{arena.alloc_array<float>(static_cast<size_t>(T * F * C)), T, F, C},
                   {arena.alloc_array<float>(static_cast<size_t>(T * F * C)), T, F, C}};
    Map in = x;
    for (size_t i = 0; i < stage.size(); ++i) {
        run_block(team, arena, stage[i], in, maps[i % 2]);
        in = maps[i % 2];
    }
    return in;
}

void ERes2Net::forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* out) const {
    ArenaScope scope(arena);
    // The features [T, n_mels] are the one-channel map [T, F = n_mels, 1].
    const Map x{const_cast<float*>(feats), T, n_mels_, 1};
    const Map h = run_conv(team, arena, stem_, x, /*relu=*/true);
    Map stage = run_stage(team, arena, stages_[0], h);
    Map fused = stage;
    for (int s = 1; s < 4; ++s) {
        stage = run_stage(team, arena, stages_[s], stage);
        fused = run_aff(team, arena, fuse_[s - 1], stage, run_conv(team, arena, down_[s - 1], fused));
    }
    head_.forward(team, arena, fused.data, fused.T, out);
}

}  // namespace pk::speaker
