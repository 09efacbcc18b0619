#include "model/speaker/ecapa_tdnn.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "common/errors.h"
#include "kernels/quantize_q8_0.h"
#include "model/layers/q8_at_load.h"
#include "model/speaker/time_statistics.h"
#include "model/speaker/vector_math.h"

namespace pk::speaker {

namespace {

constexpr float kPoolingVarianceFloor = 1e-12f;  // AttentiveStatisticsPooling.eps

// A Conv1d weight's PyTorch shape [out, in, kernel]: stored as ne [kernel, in, out], or as a
// 2-D [in, out] matrix for a 1x1 convolution.
struct ConvShape {
    int64_t out, in;
    int kernel;
};

ConvShape conv_shape(const GgufReader& gguf, const TensorLoader& t, const std::string& module) {
    const std::string name = module + ".conv.weight";
    const GgufTensor* w = gguf.find_tensor(name);
    if (w == nullptr) t.fail("missing tensor " + name);
    if (w->n_dims == 3) return {w->ne[2], w->ne[1], static_cast<int>(w->ne[0])};
    if (w->n_dims == 2) return {w->ne[1], w->ne[0], 1};
    t.fail(name + " has shape " + w->shape_string() + ", expected a Conv1d weight");
}

std::string block_name(int i) { return "blocks." + std::to_string(i); }

// Frames per task in the elementwise passes (a frame is C values).
constexpr int64_t kFrameGrain = 16;

}  // namespace

EcapaTdnn EcapaTdnn::load(const GgufReader& gguf, const TensorLoader& t) {
    EcapaTdnn n;
    const ConvShape b0 = conv_shape(gguf, t, block_name(0) + ".conv");
    n.n_mels_ = b0.in;
    n.block0_ = TdnnBlock::load(t, block_name(0), b0.in, b0.out, b0.kernel, 1);
    n.min_frames_ = n.block0_.min_frames();

    int64_t prev = b0.out, concat = 0;
    for (int i = 1; gguf.find_tensor(block_name(i) + ".tdnn1.conv.conv.weight") != nullptr; ++i) {
        const std::string p = block_name(i);
        SeRes2NetBlock b;
        b.in = prev;
        b.channels = conv_shape(gguf, t, p + ".tdnn1.conv").out;
        b.tdnn1 = TdnnBlock::load(t, p + ".tdnn1", b.in, b.channels, 1, 1);
        for (int j = 0; gguf.find_tensor(p + ".res2net_block.blocks." + std::to_string(j) + ".conv.conv.weight");
             ++j) {
            const std::string r = p + ".res2net_block.blocks." + std::to_string(j);
            const ConvShape s = conv_shape(gguf, t, r + ".conv");
            b.res2net.push_back(TdnnBlock::load(t, r, s.in, s.in, s.kernel, i + 1));
            n.min_frames_ = std::max(n.min_frames_, b.res2net.back().min_frames());
        }
        const int64_t scale = static_cast<int64_t>(b.res2net.size()) + 1;
        if (b.res2net.empty() || b.channels % scale != 0 ||
            conv_shape(gguf, t, p + ".res2net_block.blocks.0.conv").in != b.channels / scale)
            t.fail(p + ".res2net_block: its convolutions do not split " + std::to_string(b.channels) +
                   " channels into equal chunks");
        b.tdnn2 = TdnnBlock::load(t, p + ".tdnn2", b.channels, b.channels, 1, 1);
        const int64_t se = conv_shape(gguf, t, p + ".se_block.conv1").out;
        b.se_conv1 = Conv1dSame::load(t, p + ".se_block.conv1", b.channels, se, 1, 1);
        b.se_conv2 = Conv1dSame::load(t, p + ".se_block.conv2", se, b.channels, 1, 1);
        b.has_shortcut = gguf.find_tensor(p + ".shortcut.conv.weight") != nullptr;
        if (b.has_shortcut) b.shortcut = Conv1dSame::load(t, p + ".shortcut", b.in, b.channels, 1, 1);
        else if (b.in != b.channels) t.fail(p + ": widths differ and there is no shortcut convolution");
        prev = b.channels;
        concat += b.channels;
        n.blocks_.push_back(std::move(b));
    }
    if (n.blocks_.empty()) t.fail("missing tensor blocks.1.tdnn1.conv.conv.weight (no SE-Res2Net block)");

    const ConvShape mfa = conv_shape(gguf, t, "mfa.conv");
    n.mfa_ = TdnnBlock::load(t, "mfa", concat, mfa.out, mfa.kernel, 1);
    n.min_frames_ = std::max(n.min_frames_, n.mfa_.min_frames());
    const int64_t C = mfa.out;
    const int64_t attention = conv_shape(gguf, t, "asp.tdnn.conv").out;
    n.asp_tdnn_ = load_asp_tdnn(t, C, attention);
    n.asp_conv_ = Conv1dSame::load(t, "asp.conv", attention, C, 1, 1);
    n.asp_bn_ = BatchNormEval::load(t, "asp_bn.norm", 2 * C);
    n.fc_ = Conv1dSame::load(t, "fc", 2 * C, conv_shape(gguf, t, "fc").out, 1, 1);
    return n;
}

EcapaTdnn::AspTdnn EcapaTdnn::load_asp_tdnn(const TensorLoader& t, int64_t C, int64_t A) {
    const std::string name = "asp.tdnn.conv.conv.weight";
    const GgufTensor& w = t.get(name, {A, 3 * C, 1});
    const kernels::WeightType type = TensorLoader::weight_type(w);
    // Each row's first C columns (x) and last 2C (the mean and std), as Conv1dSame::load would
    // pack the whole row: quantised to Q8_0 at load under the same rule. A row of 3C values in
    // whole blocks splits into whole blocks at C: every block size is a power of two.
    const bool quantise = w.type == GgmlType::F32 && t.q8_at_load() && C % kernels::kQ8_0BlockValues == 0;
    const size_t row = kernels::weight_row_bytes(type, 3 * C), head = kernels::weight_row_bytes(type, C);
    std::vector<uint8_t> x_part(head * A), stats_part((row - head) * A);
    const auto* src = static_cast<const uint8_t*>(w.data);
    for (int64_t a = 0; a < A; ++a) {
        std::memcpy(x_part.data() + a * head, src + a * row, head);
        std::memcpy(stats_part.data() + a * (row - head), src + a * row + head, row - head);
    }
    t.release(w);
    auto pack = [&](const std::vector<uint8_t>& part, int64_t cols) {
        return std::make_shared<const kernels::PackedWeights>(
            quantise ? q8_0_at_load(reinterpret_cast<const float*>(part.data()), A, cols, t.level())
                     : kernels::PackedWeights(type, part.data(), A, cols, t.level()));
    };
    AspTdnn asp;
    asp.over_x = pack(x_part, C);
    asp.over_stats = pack(stats_part, 2 * C);
    asp.bias = t.f32("asp.tdnn.conv.conv.bias", {A});
    asp.norm = BatchNormEval::load(t, "asp.tdnn.norm.norm", A);
    asp.out = A;
    return asp;
}

void EcapaTdnn::forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* out) const {
    if (T < min_frames_)
        throw InvalidAudio("too little audio for the speaker encoder: " + std::to_string(T) +
                              " feature frames, at least " + std::to_string(min_frames_) + " needed");
    ArenaScope scope(arena);
    const int64_t C0 = block0_.out();
    float* h0 = arena.alloc_array<float>(static_cast<size_t>(T * C0));
    block0_.forward(team, arena, feats, T, n_mels_, h0, C0);

    // The blocks' outputs side by side: the input of mfa.
    int64_t concat = 0;
    for (const SeRes2NetBlock& b : blocks_) concat += b.channels;
    float* cat = arena.alloc_array<float>(static_cast<size_t>(T * concat));
    const float* x = h0;
    int64_t ldx = C0, col = 0;
    for (const SeRes2NetBlock& b : blocks_) {
        block_forward(team, arena, b, x, T, ldx, cat + col, concat);
        x = cat + col;
        ldx = concat;
        col += b.channels;
    }
    const int64_t C = mfa_.out();
    float* m = arena.alloc_array<float>(static_cast<size_t>(T * C));
    mfa_.forward(team, arena, cat, T, concat, m, C);

    float* pooled = arena.alloc_array<float>(static_cast<size_t>(2 * C));
    pool(team, arena, m, T, pooled);
    asp_bn_.apply(team, pooled, 1, 2 * C, /*relu=*/false);
    fc_.forward(team, arena, pooled, 1, 2 * C, out, fc_.out());
}

void EcapaTdnn::block_forward(ThreadTeam& team, Arena& arena, const SeRes2NetBlock& b, const float* x, int64_t T,
                              int64_t ldx, float* y, int64_t ldy) const {
    ArenaScope scope(arena);
    const int64_t C = b.channels;
    float* h1 = arena.alloc_array<float>(static_cast<size_t>(T * C));
    float* h2 = arena.alloc_array<float>(static_cast<size_t>(T * C));
    b.tdnn1.forward(team, arena, x, T, ldx, h1, C);

    // Res2Net: chunk 0 passes; chunk j runs its block on chunk j (+ chunk j - 1's output, j >= 2).
    // Each block's BatchNorm and ReLU share one pass with the sum that is the next block's input.
    const int64_t w = C / static_cast<int64_t>(b.res2net.size() + 1);
    float* sum = arena.alloc_array<float>(static_cast<size_t>(T * w));
    parallel_for(team, T, kFrameGrain, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) std::copy(h1 + t * C, h1 + t * C + w, h2 + t * C);
    });
    const float* in = h1 + w;  // chunk 1 as it is
    int64_t ld_in = C;
    for (size_t j = 0; j < b.res2net.size(); ++j) {
        const int64_t c0 = static_cast<int64_t>(j + 1) * w;
        const bool last = j + 1 == b.res2net.size();
        b.res2net[j].conv().forward(team, arena, in, T, ld_in, h2 + c0, C);
        parallel_for(team, T, kFrameGrain, [&](int64_t t0, int64_t t1) {
            for (int64_t t = t0; t < t1; ++t) {
                float* out = h2 + t * C + c0;
                b.res2net[j].norm().apply_row(out, /*relu=*/true);
                if (last) continue;
                const float* next = h1 + t * C + c0 + w;
                for (int64_t c = 0; c < w; ++c) sum[t * w + c] = next[c] + out[c];
            }
        });
        in = sum;
        ld_in = w;
    }
    b.tdnn2.forward(team, arena, h2, T, C, h1, C);  // h1 now holds tdnn2's output

    // Squeeze-excitation: one gain per channel from the time mean.
    float* mean = arena.alloc_array<float>(static_cast<size_t>(C));
    column_stats(team, h1, T, C, mean, nullptr, kPoolingVarianceFloor);
    float* squeezed = arena.alloc_array<float>(static_cast<size_t>(b.se_conv1.out()));
    b.se_conv1.forward(team, arena, mean, 1, C, squeezed, b.se_conv1.out());
    for (int64_t k = 0; k < b.se_conv1.out(); ++k) squeezed[k] = std::max(squeezed[k], 0.0f);
    float* gain = arena.alloc_array<float>(static_cast<size_t>(C));
    b.se_conv2.forward(team, arena, squeezed, 1, b.se_conv1.out(), gain, C);
    for (int64_t c = 0; c < C; ++c) gain[c] = 1.0f / (1.0f + std::exp(-gain[c]));

    // y = gain * h + residual; the residual goes to y first when it is a convolution's output.
    if (b.has_shortcut) b.shortcut.forward(team, arena, x, T, ldx, y, ldy);
    parallel_for(team, T, kFrameGrain, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t)
            for (int64_t c = 0; c < C; ++c)
                y[t * ldy + c] = h1[t * C + c] * gain[c] + (b.has_shortcut ? y[t * ldy + c] : x[t * ldx + c]);
    });
}

void EcapaTdnn::pool(ThreadTeam& team, Arena& arena, const float* x, int64_t T, float* pooled) const {
    ArenaScope scope(arena);
    const int64_t C = mfa_.out();
    // Global context: x beside its per-channel time mean and std, the same at every frame, so
    // their share of asp.tdnn's product is computed once and becomes the bias of the one over x.
    std::vector<float> stats(static_cast<size_t>(2 * C));
    column_stats(team, x, T, C, stats.data(), stats.data() + C, kPoolingVarianceFloor);
    const int64_t A = asp_tdnn_.out;
    std::vector<float> shared(static_cast<size_t>(A));
    kernels::matmul(team, arena, stats.data(), 1, 2 * C, *asp_tdnn_.over_stats, asp_tdnn_.bias, shared.data());
    float* hidden = arena.alloc_array<float>(static_cast<size_t>(T * A));
    kernels::matmul(team, arena, x, T, C, *asp_tdnn_.over_x, shared.data(), hidden, A);
    asp_tdnn_.norm.apply(team, hidden, T, A, /*relu=*/true);
    parallel_for(team, T, kFrameGrain, [&](int64_t t0, int64_t t1) {
        tanh_in_place(hidden + t0 * A, (t1 - t0) * A);
    });
    float* attn = arena.alloc_array<float>(static_cast<size_t>(T * C));
    asp_conv_.forward(team, arena, hidden, T, A, attn, C);

    softmax_stats(team, x, attn, T, C, pooled, pooled + C, kPoolingVarianceFloor);
}

}  // namespace pk::speaker
