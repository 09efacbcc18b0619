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
// Time rows per band of a block (BlockRun, band_workers.h): a row of a block's output is 20 KB at
// every stage (F halves where C doubles).
constexpr int64_t kBandRows = 32;

// fn(p) for every pixel p < pixels of `width` channels, split over the team. Each pass below reads
// and writes channel runs of channels-last maps in place, where per-pixel std::copy calls of a few
// dozen floats each (libc's memmove) took 6 % of a q8_0 embedding.
template <typename Fn>
void for_pixels(ThreadTeam& team, int64_t pixels, int64_t width, Fn fn) {
    parallel_for(team, pixels, std::max<int64_t>(1, kGrain / width), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) fn(p);
    });
}

// fn(begin, end) for runs of pixels, as for_pixels splits them, for passes that the level's row
// kernels take a run at a time.
template <typename Fn>
void for_pixel_runs(ThreadTeam& team, int64_t pixels, int64_t width, Fn fn) {
    parallel_for(team, pixels, std::max<int64_t>(1, kGrain / width), fn);
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
        // BlockRun's bands take one halo row per chunk convolution.
        if (b.convs.back().kernel_t() != 3 || b.convs.back().geometry().stride_t != 1)
            next.loader().fail("a block's chunk convolution is not 3x3 with stride 1");
    }
    b.conv3 = next(b.conv1.out());
    // As 3D-Speaker's _make_layer: a shortcut convolution where the block changes the map's shape.
    b.has_shortcut = b.conv1.geometry().stride_t != 1 || in != b.conv3.out();
    if (b.has_shortcut) b.shortcut = next(in, b.conv3.out());
    // BlockRun computes these a band of rows at a time from the rows of the band alone.
    for (const Conv2dGemm* c : {&b.conv1, &b.conv3, b.has_shortcut ? &b.shortcut : &b.conv1})
        if (c->kernel_t() != 1)
            next.loader().fail("a block's first, last or shortcut convolution is not 1x1");
    if (b.conv3.geometry().stride_t != 1 ||
        (b.has_shortcut && b.shortcut.geometry().stride_t != b.conv1.geometry().stride_t))
        next.loader().fail("a block's strides do not match: its first and shortcut convolutions take them");
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
    const int64_t C = both.C / 2, F = both.F;
    Map out{arena.alloc_array<float>(static_cast<size_t>(both.T * F * C)), both.T, F, C};
    // A band of rows at a time (its convolutions are 1x1), so that the fusions' hidden and z
    // maps stay in the cache; a block's pairs are one band already.
    auto* sigmoid = kernels_->ops.sigmoid;
    const int64_t bands = (both.T + kBandRows - 1) / kBandRows;
    for_bands(team, arena, bands, [&](ThreadTeam& t, Arena& ar, int64_t k0, int64_t k1) {
        for (int64_t t0 = k0 * kBandRows; t0 < std::min(both.T, k1 * kBandRows); t0 += kBandRows) {
            ArenaScope scope(ar);
            const Map pairs{both.data + t0 * F * both.C, std::min(kBandRows, both.T - t0), F, both.C};
            const Map hidden = run_conv(t, ar, a.squeeze, pairs);
            kernels::silu(*kernels_, t, hidden.data, hidden.size(), hidden.data);
            const Map z = run_conv(t, ar, a.expand, hidden);
            // With 1 + tanh(z) = 2 sigmoid(2 z) = 2 s: x (1 + tanh z) + y (1 - tanh z) =
            // 2 (y + s (x - y)), a pixel at a time so that its s stays in L1 between the level's
            // sigmoid and the sum.
            float* o = out.data + t0 * F * C;
            for_pixels(t, pairs.T * F, C, [&](int64_t p) {
                float* s = z.data + p * C;
                const float* x = pairs.data + p * pairs.C;
                const float* y = x + C;
                for (int64_t j = 0; j < C; ++j) s[j] *= 2.0f;
                sigmoid(s, C, s);
                for (int64_t j = 0; j < C; ++j) o[p * C + j] = 2.0f * (y[j] + s[j] * (x[j] - y[j]));
            });
        }
    });
    return out;
}

// A block's buffers on one thread, to run it a band of rows at a time: conv1's output and the
// chunk convolutions' inputs and outputs over a band and its halo (scale_ rows each side: each 3x3
// reads one row past its output), conv3's input and the shortcut's output over the band.
class ERes2Net::BlockRun {
public:
    BlockRun(const ERes2Net& net, Arena& arena, const Block& b, const Map& x, const Map& y)
        : net_(net), b_(b), x_(x), y_(y), C1_(b.conv1.out()), width_(C1_ / net.scale_),
          stride_(b.conv1.geometry().stride_t) {
        const int64_t span = std::min(y.T, kBandRows + 2 * net.scale_) * y.F;
        c1_ = arena.alloc_array<float>(static_cast<size_t>(span * C1_));
        in_ = arena.alloc_array<float>(static_cast<size_t>(span * width_));
        if (!b.fuse.empty()) pairs_ = arena.alloc_array<float>(static_cast<size_t>(span * 2 * width_));
        conv_out_ = arena.alloc_array<float>(static_cast<size_t>(span * width_));
        chunks_ = arena.alloc_array<float>(static_cast<size_t>(kBandRows * y.F * C1_));
        if (b.has_shortcut) shortcut_ = arena.alloc_array<float>(static_cast<size_t>(kBandRows * y.F * y.C));
    }

    // Output rows [t0, t0 + kBandRows) of y (clipped to the map). Successive bands reuse the
    // conv1 rows the last one computed past its end.
    void band(ThreadTeam& team, Arena& arena, int64_t t0);

private:
    // conv's output rows [r0, r1) from the input map x (a 1x1 kernel of the block's stride).
    void rows_of_x(ThreadTeam& team, Arena& arena, const Conv2dGemm& conv, int64_t r0, int64_t r1, float* out) const {
        conv.forward(team, arena, x_.data + r0 * stride_ * x_.F * x_.C, (r1 - r0 - 1) * stride_ + 1, x_.F, out,
                     /*relu=*/false);
    }

    const ERes2Net& net_;
    const Block& b_;
    const Map x_, y_;
    const int64_t C1_, width_;
    const int stride_;  // conv1's along both axes, as the shortcut's
    float *c1_, *in_, *pairs_ = nullptr, *conv_out_, *chunks_, *shortcut_ = nullptr;
    int64_t c1_begin_ = 0, c1_end_ = 0;  // the rows c1_ holds
};

void ERes2Net::BlockRun::band(ThreadTeam& team, Arena& arena, int64_t t0) {
    ArenaScope scope(arena);
    const int64_t T = y_.T, F = y_.F, C1 = C1_, width = width_, scale = net_.scale_;
    const float hi = net_.clamp_;
    const bool aff = pairs_ != nullptr;
    float *c1 = c1_, *in = in_, *pairs = pairs_, *conv_out = conv_out_, *chunks = chunks_;
    const int64_t t1 = std::min(T, t0 + kBandRows);
    // Rows within `halo` of the band, clipped to the map.
    auto first = [&](int64_t halo) { return std::max<int64_t>(0, t0 - halo); };
    auto last = [&](int64_t halo) { return std::min(T, t1 + halo); };
    // c1 holds rows [r0, last(scale)); those the last band computed move to its front.
    const int64_t r0 = first(scale);
    const int64_t kept = c1_end_ > r0 && c1_begin_ <= r0 ? c1_end_ - r0 : 0;
    std::copy(c1 + (r0 - c1_begin_) * F * C1, c1 + (r0 - c1_begin_ + kept) * F * C1, c1);
    if (r0 + kept < last(scale)) rows_of_x(team, arena, b_.conv1, r0 + kept, last(scale), c1 + kept * F * C1);
    c1_begin_ = r0;
    c1_end_ = last(scale);
    auto* clamp_rows = net_.kernels_->ops.affine_clamp_rows;
    auto* clamped_sum = net_.kernels_->ops.clamped_sum_rows;
    for_pixel_runs(team, (last(scale) - r0) * F, width, [&](int64_t p0, int64_t p1) {
        clamp_rows(c1 + p0 * C1, C1, p1 - p0, width, nullptr, nullptr, true, hi, in + p0 * width, width);
    });
    for (int64_t i = 0; i < scale; ++i) {
        // Convolution i runs on rows [a0, a1) and is right on [n0, n1): one row in from each
        // cut end, where it read zeros for the rows past it.
        const int64_t a0 = first(scale - i), a1 = last(scale - i);
        const int64_t n0 = first(scale - i - 1), n1 = last(scale - i - 1);
        const Map conv_in = i > 0 && aff
                                ? net_.run_aff(team, arena, b_.fuse[i - 1], Map{pairs, a1 - a0, F, 2 * width})
                                : Map{in, a1 - a0, F, width};
        b_.convs[i].forward(team, arena, conv_in.data, a1 - a0, F, conv_out, /*relu=*/false);
        // The output Hardtanh'd into its place in chunks (the band's rows), and the next input
        // made from it (halo rows too): runs of pixels through the level's row kernels, where a
        // call per pixel of `width` floats (16 in the first stage) and scalar loops cost a q8_0
        // embedding ~5 % (1 thread 102.5 -> 96.9 ms per 10 s, 2 threads 114.9 -> 107.0 CPU).
        const bool next = i + 1 < scale;
        const float* out = conv_out + (n0 - a0) * F * width;             // from row n0
        const float* src = c1 + (n0 - r0) * F * C1 + (i + 1) * width;  // the next chunk of conv1's
        const int64_t band0 = (t0 - n0) * F, band1 = (t1 - n0) * F;     // the band's pixels
        for_pixel_runs(team, (n1 - n0) * F, width, [&](int64_t p0, int64_t p1) {
            const int64_t b0 = std::max(p0, band0), b1 = std::min(p1, band1);
            if (b0 < b1)
                clamp_rows(out + b0 * width, width, b1 - b0, width, nullptr, nullptr, true, hi,
                           chunks + (b0 - band0) * C1 + i * width, C1);
            if (!next) return;
            if (aff) {
                float* pair = pairs + p0 * 2 * width;
                clamp_rows(out + p0 * width, width, p1 - p0, width, nullptr, nullptr, true, hi, pair, 2 * width);
                clamp_rows(src + p0 * C1, C1, p1 - p0, width, nullptr, nullptr, true, hi, pair + width, 2 * width);
            } else {
                clamped_sum(src + p0 * C1, C1, out + p0 * width, width, p1 - p0, width, hi, in + p0 * width, width);
            }
        });
    }
    float* yb = y_.data + t0 * F * y_.C;
    b_.conv3.forward(team, arena, chunks, t1 - t0, F, yb, /*relu=*/false);
    const float* residual = x_.data + t0 * F * y_.C;
    if (b_.has_shortcut) {
        rows_of_x(team, arena, b_.shortcut, t0, t1, shortcut_);
        residual = shortcut_;
    }
    parallel_for(team, (t1 - t0) * F * y_.C, kGrain, [&](int64_t begin, int64_t end) {
        net_.kernels_->ops.add_clamp(yb + begin, residual + begin, end - begin, hi, yb + begin);
    });
}

void ERes2Net::run_block(ThreadTeam& team, Arena& arena, const Block& b, const Map& x, const Map& y) const {
    for_bands(team, arena, (y.T + kBandRows - 1) / kBandRows,
              [&](ThreadTeam& t, Arena& ar, int64_t k0, int64_t k1) {
                  ArenaScope scope(ar);
                  BlockRun run(*this, ar, b, x, y);
                  for (int64_t k = k0; k < k1; ++k) run.band(t, ar, k * kBandRows);
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
