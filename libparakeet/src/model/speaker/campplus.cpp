#include "model/speaker/campplus.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/errors.h"
#include "model/speaker/band_workers.h"
#include "model/speaker/vector_math.h"
#include "model/speaker/voicedetect_schema.h"

namespace pk::speaker {

namespace {

namespace vd = schema::voicedetect;

constexpr int kSegmentFrames = 100;       // CAMLayer.seg_pooling's seg_len
constexpr int kBlockDilation[] = {1, 2, 2};  // CAMPPlus's three dense blocks
constexpr int kHeadStrides[] = {2, 1, 2, 1};  // FCM: two stages of two BasicResBlocks

// Below this many rows (frames, or positions of a map) per thread an elementwise pass is not
// worth waking the team.
constexpr int64_t kMinRows = 64;
// Channels per task of the passes over time.
constexpr int64_t kChannelGrain = 32;

int64_t halved(int64_t bins) { return (bins - 1) / 2 + 1; }  // a 3x3, stride-2, pad-1 conv

// A 3x3 conv with padding 1 and the given frequency stride (ConvGeometry: stride_t, stride_f, pad_t,
// pad_f, dilation_t).
ConvGeometry head_3x3(int stride) { return {1, stride, 1, 1, 1}; }

}  // namespace

// The manifest's convolutions and BatchNorms, handed out in forward order.
class CamPPlus::Manifest {
public:
    Manifest(const GgufReader& gguf, const TensorLoader& t) : gguf_(gguf), t_(t) {
        weights_ = strings(vd::kCampplusConvWeight);
        biases_ = strings(vd::kCampplusConvBias);
        norms_ = strings(vd::kCampplusBnPrefix);
        if (weights_.size() != biases_.size())
            t.fail(std::string(vd::kCampplusConvBias) + " lists " + std::to_string(biases_.size()) +
                   " biases for " + std::to_string(weights_.size()) + " convolutions");
        eps_ = gguf.has_key(vd::kCampplusBnEps) ? gguf.get_f32(vd::kCampplusBnEps) : 1e-5f;
        if (!(eps_ > 0)) t.fail(std::string(vd::kCampplusBnEps) + " must be positive");
    }

    float eps() const { return eps_; }
    std::string string(const char* key) const {
        if (!gguf_.has_key(key)) t_.fail(std::string("missing key ") + key);
        return gguf_.get_string(key);
    }

    Conv2dGemm conv(int64_t in, ConvGeometry geometry, const char* what) {
        if (next_conv_ >= weights_.size())
            t_.fail(std::string(vd::kCampplusConvWeight) + " ends before the " + what + " convolution");
        const size_t i = next_conv_++;
        return Conv2dGemm::load(gguf_, t_, weights_[i], biases_[i], in, geometry);
    }
    // A conv whose kernel must be kh x kw (the head's fixed shapes).
    Conv2dGemm conv(int64_t in, ConvGeometry geometry, const char* what, int kh, int kw) {
        Conv2dGemm c = conv(in, geometry, what);
        if (c.kernel_f() != kh || c.kernel_t() != kw)
            t_.fail(weights_[next_conv_ - 1] + " (the " + what + " convolution) has a " + std::to_string(c.kernel_f()) +
                    "x" + std::to_string(c.kernel_t()) + " kernel, CAM++ has " + std::to_string(kh) + "x" +
                    std::to_string(kw));
        return c;
    }
    ChannelAffine norm(int64_t channels, const char* what) {
        if (next_norm_ >= norms_.size())
            t_.fail(std::string(vd::kCampplusBnPrefix) + " ends before the " + what + " BatchNorm");
        return ChannelAffine::load(t_, norms_[next_norm_++], channels, eps_);
    }
    // (kernel - 1) / 2 of the next convolution, a 1-D one with an odd kernel ("same" padding).
    int next_half_kernel(const char* what) const {
        if (next_conv_ >= weights_.size())
            t_.fail(std::string(vd::kCampplusConvWeight) + " ends before the " + what + " convolution");
        const KernelShape k = kernel_shape(gguf_, t_, weights_[next_conv_]);
        if (k.kf != 1 || k.kt % 2 == 0)
            t_.fail(weights_[next_conv_] + " (the " + what + " convolution) must have an odd 1-D kernel");
        return (k.kt - 1) / 2;
    }
    // Whether a CAM layer comes next: its second convolution (the local one) has a kernel wider
    // than 1, where a transit's conv is followed by a 1x1 (the next layer's first, or the dense).
    bool cam_layer_next() const {
        return next_conv_ + 1 < weights_.size() && kernel_shape(gguf_, t_, weights_[next_conv_ + 1]).kt > 1;
    }
    void expect_all_used() const {
        if (next_conv_ != weights_.size() || next_norm_ != norms_.size())
            t_.fail("the campplus manifest lists " + std::to_string(weights_.size()) + " convolutions and " +
                    std::to_string(norms_.size()) + " BatchNorms, CAM++ used " + std::to_string(next_conv_) +
                    " and " + std::to_string(next_norm_));
    }

private:
    std::vector<std::string> strings(const char* key) const {
        if (!gguf_.has_key(key)) t_.fail(std::string("missing key ") + key);
        return gguf_.get_string_array(key);
    }

    const GgufReader& gguf_;
    const TensorLoader& t_;
    std::vector<std::string> weights_, biases_, norms_;
    size_t next_conv_ = 0, next_norm_ = 0;
    float eps_ = 1e-5f;
};

CamPPlus CamPPlus::load(const GgufReader& gguf, const TensorLoader& t, int64_t n_mels) {
    if (n_mels < 8) t.fail("CAM++ needs at least 8 mel bins, the front end gives " + std::to_string(n_mels));
    Manifest m(gguf, t);
    CamPPlus n;
    n.n_mels_ = n_mels;
    n.head_conv1_ = m.conv(1, head_3x3(1), "head conv1", 3, 3);
    const int64_t C = n.head_conv1_.out();
    int64_t bins = n_mels;
    for (int stride : kHeadStrides) {
        ResBlock b;
        b.conv1 = m.conv(C, head_3x3(stride), "head block conv1", 3, 3);
        b.conv2 = m.conv(C, head_3x3(1), "head block conv2", 3, 3);
        b.has_shortcut = stride != 1;
        if (b.has_shortcut) b.shortcut = m.conv(C, {1, stride, 0, 0, 1}, "head shortcut", 1, 1);
        if (b.conv2.out() != C || (b.has_shortcut && b.shortcut.out() != C))
            t.fail("the CAM++ head's blocks must keep its " + std::to_string(C) + " channels");
        if (stride != 1) bins = halved(bins);
        n.head_blocks_.push_back(std::move(b));
    }
    n.head_conv2_ = m.conv(C, head_3x3(2), "head conv2", 3, 3);
    bins = halved(bins);

    n.tdnn_ = m.conv(C * bins, {2, 1, m.next_half_kernel("tdnn"), 0, 1}, "tdnn");
    int64_t width = n.tdnn_.out();
    for (int dilation : kBlockDilation) {
        DenseBlock b;
        b.in = width;
        while (m.cam_layer_next()) {
            CamLayer l;
            l.norm = m.norm(width, "CAM layer nonlinear1");
            l.linear1 = m.conv(width, {}, "CAM layer linear1");
            const int64_t bn = l.linear1.out();
            const int half = m.next_half_kernel("CAM layer linear_local");
            l.local = m.conv(bn, {1, 1, half * dilation, 0, dilation}, "CAM layer linear_local");
            l.mask1 = m.conv(bn, {}, "CAM layer mask linear1", 1, 1);
            l.mask2 = m.conv(l.mask1.out(), {}, "CAM layer mask linear2", 1, 1);
            if (l.mask2.out() != l.local.out())
                t.fail("a CAM layer's mask has " + std::to_string(l.mask2.out()) + " channels for " +
                       std::to_string(l.local.out()) + " outputs");
            width += l.local.out();
            b.layers.push_back(std::move(l));
        }
        if (b.layers.empty()) t.fail("a CAM++ dense block has no CAM layer");
        b.width = width;
        b.transit_norm = m.norm(width, "transit");
        b.transit = m.conv(width, {}, "transit", 1, 1);
        width = b.transit.out();
        n.blocks_.push_back(std::move(b));
    }
    n.dense_ = m.conv(2 * width, {}, "dense", 1, 1);
    n.embedding_norm_ = ChannelAffine::load_statistics(t, m.string(vd::kCampplusEmbBnMean),
                                                       m.string(vd::kCampplusEmbBnVar), n.dense_.out(), m.eps());
    m.expect_all_used();
    return n;
}

void CamPPlus::head_forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* y) const {
    ArenaScope scope(arena);
    const int64_t C = head_conv1_.out();
    int64_t F = n_mels_;
    // [T, F, C] maps; the features [T, n_mels] are the one-channel map.
    float* x = arena.alloc_array<float>(static_cast<size_t>(T * F * C));
    head_conv1_.forward(team, arena, feats, T, F, x, /*relu=*/true);
    // The blocks' maps are at most as tall as the first block's output (the bins only shrink): h
    // takes conv1's output, `spare` the shortcut's or the block's own, turn about with x.
    const int64_t tallest = head_blocks_.front().conv1.out_f(F);
    float* h = arena.alloc_array<float>(static_cast<size_t>(tallest * T * C));
    float* spare = arena.alloc_array<float>(static_cast<size_t>(tallest * T * C));
    for (const ResBlock& blk : head_blocks_) {
        const int64_t Fo = blk.conv1.out_f(F);
        blk.conv1.forward(team, arena, x, T, F, h, /*relu=*/true);
        // conv2 adds the shortcut and takes the ReLU itself (in its Winograd output transform).
        if (blk.has_shortcut) {
            blk.shortcut.forward(team, arena, x, T, F, spare, /*relu=*/false);
            blk.conv2.forward_add_relu(team, arena, h, T, Fo, spare, x);  // x read by both already
        } else {
            blk.conv2.forward_add_relu(team, arena, h, T, Fo, x, spare);
            std::swap(x, spare);
        }
        F = Fo;
    }
    const int64_t Fo = head_conv2_.out_f(F);
    head_conv2_.forward(team, arena, x, T, F, h, /*relu=*/true);
    // Frame t's features: channel-major, y[t][c * Fo + f].
    for_rows(team, T, kMinRows, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t)
            for (int64_t ch = 0; ch < C; ++ch)
                for (int64_t f = 0; f < Fo; ++f) y[t * C * Fo + ch * Fo + f] = h[(t * Fo + f) * C + ch];
    });
}

void CamPPlus::cam_forward(ThreadTeam& team, Arena& arena, const CamLayer& l, const float* x, int64_t T, float* y,
                           int64_t ldy) const {
    ArenaScope scope(arena);
    const int64_t in = l.linear1.in(), bn = l.linear1.out(), G = l.local.out();
    float* h = arena.alloc_array<float>(static_cast<size_t>(T * bn));
    float* local = arena.alloc_array<float>(static_cast<size_t>(T * G));
    // Each thread takes a range of frames through the BatchNorm, linear1 and the local conv alone,
    // its linear1 rows widened by the rows the local conv reads past the range's ends (recomputed
    // where ranges meet), where each of those passes on the whole team (the BatchNorm, linear1's
    // quantising, products and ReLU, the local conv's map quantising, tap table and products) met
    // the team at a barrier (2 threads: 33.9 -> 33.2 ms per 10 s). A row's bits do not depend on
    // its range.
    const int64_t halo = l.local.geometry().pad_t;
    for_row_ranges(team, arena, T, kMinRows, [&](ThreadTeam& t, Arena& ar, int64_t r0, int64_t r1) {
        ArenaScope range_scope(ar);
        const int64_t lo = std::max<int64_t>(0, r0 - halo), hi = std::min(T, r1 + halo), n = hi - lo;
        const bool whole = lo == r0 && hi == r1;  // no halo: straight into h and local
        float* a = ar.alloc_array<float>(static_cast<size_t>(n * in));
        l.norm.apply(t, x + lo * ldy, n, ldy, a, in, /*relu=*/true);
        float* hr = whole ? h + r0 * bn : ar.alloc_array<float>(static_cast<size_t>(n * bn));
        l.linear1.forward(t, ar, a, n, 1, hr, /*relu=*/true);
        // Its first and last `halo` rows read zeros past the range's rows where the map goes on.
        float* lr = whole ? local + r0 * G : ar.alloc_array<float>(static_cast<size_t>(n * G));
        l.local.forward(t, ar, hr, n, 1, lr, /*relu=*/false);
        if (whole) return;
        std::copy(hr + (r0 - lo) * bn, hr + (r1 - lo) * bn, h + r0 * bn);
        std::copy(lr + (r0 - lo) * G, lr + (r1 - lo) * G, local + r0 * G);
    });

    // The context is constant over each 100-frame segment: the mask runs once per segment.
    const int64_t segments = (T + kSegmentFrames - 1) / kSegmentFrames;
    float* context = arena.alloc_array<float>(static_cast<size_t>(segments * bn));
    double* sums = arena.alloc_array<double>(static_cast<size_t>(segments * bn));
    // Each task a block of channels, summed a frame at a time (whole rows of h, not a column at a
    // stride of bn), each channel's segment sums in frame order: the split changes no bit.
    parallel_for(team, bn, kChannelGrain, [&](int64_t c0, int64_t c1) {
        for (int64_t s = 0; s < segments; ++s) {
            double* part = sums + s * bn;
            std::fill(part + c0, part + c1, 0.0);
            for (int64_t t = s * kSegmentFrames; t < std::min(T, (s + 1) * kSegmentFrames); ++t)
                for (int64_t c = c0; c < c1; ++c) part[c] += h[t * bn + c];
        }
        for (int64_t c = c0; c < c1; ++c) {
            double total = 0;
            for (int64_t s = 0; s < segments; ++s) {
                const int64_t frames = std::min(T, (s + 1) * kSegmentFrames) - s * kSegmentFrames;
                context[s * bn + c] = static_cast<float>(sums[s * bn + c] / static_cast<double>(frames));
                total += sums[s * bn + c];
            }
            const float mean = static_cast<float>(total / static_cast<double>(T));
            for (int64_t s = 0; s < segments; ++s) context[s * bn + c] += mean;
        }
    });
    float* hidden = arena.alloc_array<float>(static_cast<size_t>(segments * l.mask1.out()));
    l.mask1.forward(team, arena, context, segments, 1, hidden, /*relu=*/true);
    float* mask = arena.alloc_array<float>(static_cast<size_t>(segments * G));
    l.mask2.forward(team, arena, hidden, segments, 1, mask, /*relu=*/false);
    for (int64_t i = 0; i < segments * G; ++i) mask[i] = 1.0f / (1.0f + std::exp(-mask[i]));
    for_rows(team, T, kMinRows, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const float* m = mask + (t / kSegmentFrames) * G;
            for (int64_t g = 0; g < G; ++g) y[t * ldy + g] = local[t * G + g] * m[g];
        }
    });
}

void CamPPlus::block_forward(ThreadTeam& team, Arena& arena, const DenseBlock& b, float* cat, int64_t T) const {
    int64_t filled = b.in;
    for (const CamLayer& l : b.layers) {
        cam_forward(team, arena, l, cat, T, cat + filled, b.width);
        filled += l.local.out();
    }
}

void CamPPlus::forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* out) const {
    if (T < min_frames())
        throw InvalidAudio("too little audio for the speaker encoder: " + std::to_string(T) +
                           " feature frames, at least " + std::to_string(min_frames()) + " needed");
    ArenaScope scope(arena);
    float* head = arena.alloc_array<float>(static_cast<size_t>(T * tdnn_.in()));
    head_forward(team, arena, feats, T, head);
    const int64_t Tp = tdnn_.out_t(T);
    float* cat = arena.alloc_array<float>(static_cast<size_t>(Tp * blocks_.front().width));
    tdnn_.forward(team, arena, head, T, 1, tdnn_.in(), cat, blocks_.front().width, /*relu=*/true);
    float* x = nullptr;
    for (size_t i = 0; i < blocks_.size(); ++i) {
        const DenseBlock& b = blocks_[i];
        block_forward(team, arena, b, cat, Tp);
        b.transit_norm.apply(team, cat, Tp, b.width, cat, b.width, /*relu=*/true);
        const bool last = i + 1 == blocks_.size();
        const int64_t ld = last ? b.transit.out() : blocks_[i + 1].width;
        x = arena.alloc_array<float>(static_cast<size_t>(Tp * ld));
        b.transit.forward(team, arena, cat, Tp, 1, b.width, x, ld, /*relu=*/last);
        cat = x;
    }

    // Statistics pooling: the time mean and unbiased standard deviation of each channel.
    const int64_t C = blocks_.back().transit.out();
    float* stats = arena.alloc_array<float>(static_cast<size_t>(2 * C));
    double* mean = arena.alloc_array<double>(static_cast<size_t>(C));
    double* dev = arena.alloc_array<double>(static_cast<size_t>(C));
    column_moments(team, x, Tp, C, mean, dev);
    for (int64_t c = 0; c < C; ++c) {
        stats[c] = static_cast<float>(mean[c]);
        stats[C + c] = static_cast<float>(std::sqrt(dev[c] / static_cast<double>(Tp - 1)));
    }
    dense_.forward(team, arena, stats, 1, 1, out, /*relu=*/false);
    embedding_norm_.apply(team, out, 1, dense_.out(), out, dense_.out(), /*relu=*/false);
}

}  // namespace pk::speaker
