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

// The network's activation, Hardtanh(0, hi).
float hardtanh(float v, float hi) { return std::min(std::max(v, 0.0f), hi); }

// fn(p) for every pixel p < pixels of `width` channels, split over the team. Each pass below reads
// and writes channel runs of channels-last maps in place, where per-pixel std::copy calls of a few
// dozen floats each (libc's memmove) took 6 % of a q8_0 embedding.
template <typename Fn>
void for_pixels(ThreadTeam& team, int64_t pixels, int64_t width, Fn fn) {
    parallel_for(team, pixels, std::max<int64_t>(1, kGrain / width), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) fn(p);
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

ERes2Net::Map ERes2Net::run_aff(ThreadTeam& team, Arena& arena, const Aff& a, const Map& both) const {
    const int64_t C = both.C / 2, pixels = both.T * both.F;
    Map out{arena.alloc_array<float>(static_cast<size_t>(pixels * C)), both.T, both.F, C};
    ArenaScope scope(arena);
    const Map hidden = run_conv(team, arena, a.squeeze, both);
    kernels::silu(*kernels_, team, hidden.data, hidden.size(), hidden.data);
    const Map z = run_conv(team, arena, a.expand, hidden);
    // With 1 + tanh(z) = 2 sigmoid(2 z) = 2 s: x (1 + tanh z) + y (1 - tanh z) = 2 (y + s (x - y)),
    // a pixel at a time so that its s stays in L1 between the level's sigmoid and the sum.
    auto* sigmoid = kernels_->ops.sigmoid;
    for_pixels(team, pixels, C, [&](int64_t p) {
        float* s = z.data + p * C;
        const float* x = both.data + p * both.C;
        const float* y = x + C;
        float* o = out.data + p * C;
        for (int64_t j = 0; j < C; ++j) s[j] *= 2.0f;
        sigmoid(s, C, s);
        for (int64_t j = 0; j < C; ++j) o[j] = 2.0f * (y[j] + s[j] * (x[j] - y[j]));
    });
    return out;
}

void ERes2Net::run_block(ThreadTeam& team, Arena& arena, const Block& b, const Map& x, const Map& y) const {
    ArenaScope scope(arena);
    const Map c1 = run_conv(team, arena, b.conv1, x);  // Hardtanh'd where its chunks are read
    const int64_t width = c1.C / scale_, pixels = c1.T * c1.F;
    const float hi = clamp_;
    const bool aff = !b.fuse.empty();
    // The chunk convolutions' outputs side by side (conv3's input), and their inputs: chunk 0, then
    // chunk i plus the previous output, or the previous output and chunk i side by side for AFF.
    Map chunks{arena.alloc_array<float>(static_cast<size_t>(c1.size())), c1.T, c1.F, c1.C};
    Map in{arena.alloc_array<float>(static_cast<size_t>(pixels * width)), c1.T, c1.F, width};
    Map both{aff ? arena.alloc_array<float>(static_cast<size_t>(2 * pixels * width)) : nullptr, c1.T, c1.F,
             2 * width};
    float* conv_out = arena.alloc_array<float>(static_cast<size_t>(pixels * width));
    for_pixels(team, pixels, width, [&](int64_t p) {
        const float* src = c1.data + p * c1.C;
        for (int64_t j = 0; j < width; ++j) in.data[p * width + j] = hardtanh(src[j], hi);
    });
    for (int64_t i = 0; i < scale_; ++i) {
        const Map conv_in = i > 0 && aff ? run_aff(team, arena, b.fuse[i - 1], both) : in;
        b.convs[i].forward(team, arena, conv_in.data, c1.T, c1.F, conv_out, /*relu=*/false);
        // One pass: this output Hardtanh'd into its place in chunks, and the next input made.
        const int64_t next = i + 1 < scale_ ? (i + 1) * width : -1;
        for_pixels(team, pixels, width, [&](int64_t p) {
            const float* o = conv_out + p * width;
            float* chunk = chunks.data + p * chunks.C + i * width;
            for (int64_t j = 0; j < width; ++j) chunk[j] = hardtanh(o[j], hi);
            if (next < 0) return;
            const float* src = c1.data + p * c1.C + next;
            if (aff) {
                float* pair = both.data + p * both.C;
                for (int64_t j = 0; j < width; ++j) {
                    pair[j] = chunk[j];
                    pair[width + j] = hardtanh(src[j], hi);
                }
            } else {
                float* sum = in.data + p * width;
                for (int64_t j = 0; j < width; ++j) sum[j] = hardtanh(src[j], hi) + chunk[j];
            }
        });
    }
    b.conv3.forward(team, arena, chunks.data, chunks.T, chunks.F, y.data, /*relu=*/false);
    const Map residual = b.has_shortcut ? run_conv(team, arena, b.shortcut, x) : x;
    parallel_for(team, y.size(), kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) y.data[k] = hardtanh(y.data[k] + residual.data[k], hi);
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
        // AFF(stage, down(fused)) on the two side by side: the convolution writes its half itself.
        const Map both{arena.alloc_array<float>(static_cast<size_t>(2 * stage.size())), stage.T, stage.F, 2 * stage.C};
        for_pixels(team, stage.T * stage.F, stage.C, [&](int64_t p) {
            std::copy_n(stage.data + p * stage.C, stage.C, both.data + p * both.C);
        });
        down_[s - 1].forward(team, arena, fused.data, fused.T, fused.F, fused.C, both.data + stage.C, both.C,
                             /*relu=*/false);
        fused = run_aff(team, arena, fuse_[s - 1], both);
    }
    head_.forward(team, arena, fused.data, fused.T, out);
}

}  // namespace pk::speaker
