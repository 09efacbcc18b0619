#include "model/encoder/subsampling.h"

#include <algorithm>

#include "kernels/conv_depthwise_weights.h"
#include "kernels/conv_pointwise.h"
#include "kernels/conv_subsampling.h"
#include "kernels/ops_activation.h"
#include "kernels/quantize_q8_0.h"
#include "model/gguf_schema.h"
#include "model/layers/q8_at_load.h"

namespace pk {
namespace {

using kernels::conv3x3_s2_output_size;

// A 3×3 kernel with one input channel per output channel ([C, 1, 3, 3]), packed tap-major.
void load_3x3(const TensorLoader& t, const std::string& name, int64_t C, std::vector<float>& w,
              std::vector<float>& b) {
    const std::string path = schema::subsampling_module(name);
    const float* raw = t.f32(schema::weight(path), {C, 1, 3, 3});
    w.resize(static_cast<size_t>(9 * C));
    kernels::pack_depthwise_weight(raw, C, 9, w.data());
    const float* bias = t.f32(schema::bias(path), {C});
    b.assign(bias, bias + C);
}

}  // namespace

// When q8_at_load.h says so (opt-in), a quantised model quantises the 1x1 convs to Q8_0 at load: they are
// then a Q8_0 matrix product (the VNNI GEMM, ~3x the f32 kernel). Else the f32 kernel.
DwStridingSubsampling::Pointwise DwStridingSubsampling::Pointwise::load(const TensorLoader& t, const std::string& name,
                                                                        int64_t C) {
    Pointwise p;
    const std::string path = schema::subsampling_module(name);
    p.kernels = &t.kernels();
    if (t.q8_at_load() && quantised_at_load(schema::weight(path), t.q8_subsampling()) && C % kernels::kQ8_0BlockValues == 0) {
        p.q8 = Linear::load(t, path, C, C, true);
        return p;
    }
    const float* raw = t.f32(schema::weight(path), {C, C, 1, 1});
    p.f32.resize(static_cast<size_t>(kernels::pointwise_conv_packed_size(C, C)));
    kernels::pointwise_conv_pack_weight(raw, C, C, p.f32.data());
    p.bias = t.f32(schema::bias(path), {C});
    p.channels = C;
    return p;
}

void DwStridingSubsampling::Pointwise::forward_relu(ThreadTeam& team, Arena& arena, const float* x, int64_t P,
                                                    float* y) const {
    if (f32.empty()) {
        q8.forward(team, arena, x, P, y);
        kernels::relu(team, y, P * q8.out(), y);
    } else {
        kernels::pointwise_conv(*kernels, team, x, P, channels, f32.data(), channels, bias, true, y);
    }
}

DwStridingSubsampling::DwStridingSubsampling(const TensorLoader& t, const EncoderConfig& cfg)
    : n_mels_(cfg.feat_in), channels_(cfg.subsampling_channels), causal_(cfg.causal_subsampling),
      kernels_(&t.kernels()) {
    const int64_t C = channels_;
    load_3x3(t, schema::kSubsamplingConv0, C, conv0_w_, conv0_b_);
    load_3x3(t, schema::kSubsamplingDepthwise1, C, dw1_w_, dw1_b_);
    pw1_ = Pointwise::load(t, schema::kSubsamplingPointwise1, C);
    load_3x3(t, schema::kSubsamplingDepthwise2, C, dw2_w_, dw2_b_);
    pw2_ = Pointwise::load(t, schema::kSubsamplingPointwise2, C);
    int64_t f = n_mels_;
    for (int i = 0; i < 3; ++i) f = conv3x3_s2_output_size(f + (causal_ ? 1 : 0));
    out_ = Linear::load(t, schema::subsampling_module(schema::kSubsamplingOut), cfg.d_model, C * f, true);
}

int64_t DwStridingSubsampling::output_frames(int64_t mel_frames, bool causal) {
    if (mel_frames <= 0) return 0;
    const int64_t c = causal ? 1 : 0;
    return conv3x3_s2_output_size(conv3x3_s2_output_size(conv3x3_s2_output_size(mel_frames + c) + c) + c);
}

namespace {

// A 3-tap, stride-2, pad-1 conv computes output row r from input rows 2r-1 .. 2r+1. Output
// rows [begin, end) are computed by running the kernel on the block of input rows [lo, hi):
// local output j of the block is global output lo/2 + j. With lo = 2·begin - 2 (one output row
// early) the first local output reads the kernel's zero padding in place of row lo-1 and is
// skipped; hi = 2·end covers the last needed input row 2·end - 1. At the true edges (row 0,
// the last row) the padding is real and nothing is skipped.
struct InputBlock {
    int64_t lo, hi;  // input rows
    int64_t skip;    // leading local outputs to drop
};

InputBlock input_block(int64_t begin, int64_t end, int64_t in_rows) {
    InputBlock b;
    b.lo = begin > 0 ? 2 * begin - 2 : 0;
    b.hi = std::min(in_rows, 2 * end);
    b.skip = begin - b.lo / 2;
    return b;
}

}  // namespace

namespace {

// Rows [b.lo, b.hi) of a stage's input as the pad-1 kernels must see them, where x holds the
// stage's input rows from x_first on ([rows, F, C]): those rows themselves, or, for a causal
// stage, the rows of the shifted input (row i is x's row i - 1, row 0 and column 0 zero) in a
// copy in the arena.
const float* stage_input(Arena& arena, const float* x, int64_t x_first, int64_t F, int64_t C, const InputBlock& b,
                         bool causal) {
    if (!causal) return x + (b.lo - x_first) * F * C;
    const int64_t n = b.hi - b.lo, Fs = F + 1;
    float* s = arena.alloc_array<float>(static_cast<size_t>(n * Fs * C));
    for (int64_t i = 0; i < n; ++i) {
        float* row = s + i * Fs * C;
        std::fill(row, row + C, 0.0f);
        const int64_t src = b.lo + i - 1;
        if (src < 0) std::fill(row + C, row + Fs * C, 0.0f);
        else std::copy_n(x + (src - x_first) * F * C, F * C, row + C);
    }
    return s;
}

// The rows [lo, hi) of a stage's output that the next stage's (shifted) input rows [b.lo, b.hi) need.
struct RowRange {
    int64_t lo, hi;
};
RowRange needed_rows(const InputBlock& b, int64_t c) { return {std::max<int64_t>(0, b.lo - c), b.hi - c}; }

}  // namespace

void DwStridingSubsampling::features(ThreadTeam& team, Arena& arena, const float* mel, int64_t T, int64_t begin,
                                     int64_t end, float* flat) const {
    ArenaScope scope(arena);
    const int64_t C = channels_, c = causal_ ? 1 : 0;
    // For a causal model each stage's (shifted) input has one row and one column more than the
    // previous stage's output.
    const int64_t F0 = n_mels_;
    const int64_t T1 = conv3x3_s2_output_size(T + c), F1 = conv3x3_s2_output_size(F0 + c);
    const int64_t T2 = conv3x3_s2_output_size(T1 + c), F2 = conv3x3_s2_output_size(F1 + c);
    const int64_t F3 = conv3x3_s2_output_size(F2 + c);
    // Work backwards: which input rows each stage reads, and which output rows of the stage
    // before that needs.
    const InputBlock b3 = input_block(begin, end, T2 + c);
    const RowRange need2 = needed_rows(b3, c);
    const InputBlock b2 = input_block(need2.lo, need2.hi, T1 + c);
    const RowRange need1 = needed_rows(b2, c);
    const InputBlock b1 = input_block(need1.lo, need1.hi, T + c);

    // Stage 1: conv.0 + ReLU; a1 row j is stage-1 output b1.lo / 2 + j.
    const int64_t n1 = conv3x3_s2_output_size(b1.hi - b1.lo);
    float* a1 = arena.alloc_array<float>(static_cast<size_t>(n1 * F1 * C));
    kernels::conv2d_3x3_single_channel(*kernels_, team, stage_input(arena, mel, 0, F0, 1, b1, causal_),
                                       b1.hi - b1.lo, F0 + c, /*stride=*/2, conv0_w_.data(), conv0_b_.data(), C,
                                       /*relu=*/true, a1);
    const float* x1 = a1 + (need1.lo - b1.lo / 2) * F1 * C;  // stage-1 rows from need1.lo

    // Stage 2: depthwise, then pointwise + ReLU on the rows stage 3 needs (a2: rows from need2.lo).
    const int64_t n2 = conv3x3_s2_output_size(b2.hi - b2.lo);
    float* d2 = arena.alloc_array<float>(static_cast<size_t>(n2 * F2 * C));
    kernels::depthwise_conv2d_3x3_s2(*kernels_, team, stage_input(arena, x1, need1.lo, F1, C, b2, causal_),
                                     b2.hi - b2.lo, F1 + c, C, dw1_w_.data(), dw1_b_.data(), d2);
    const int64_t rows2 = need2.hi - need2.lo;
    float* a2 = arena.alloc_array<float>(static_cast<size_t>(rows2 * F2 * C));
    pw1_.forward_relu(team, arena, d2 + (need2.lo - b2.lo / 2) * F2 * C, rows2 * F2, a2);

    // Stage 3: depthwise, then pointwise + ReLU on outputs [begin, end).
    const int64_t rows3 = end - begin;
    const int64_t n3 = conv3x3_s2_output_size(b3.hi - b3.lo);
    float* d3 = arena.alloc_array<float>(static_cast<size_t>(n3 * F3 * C));
    kernels::depthwise_conv2d_3x3_s2(*kernels_, team, stage_input(arena, a2, need2.lo, F2, C, b3, causal_),
                                     b3.hi - b3.lo, F2 + c, C, dw2_w_.data(), dw2_b_.data(), d3);
    float* a3 = arena.alloc_array<float>(static_cast<size_t>(rows3 * F3 * C));
    pw2_.forward_relu(team, arena, d3 + (begin - b3.lo / 2) * F3 * C, rows3 * F3, a3);

    kernels::flatten_channel_major(team, a3, rows3, F3, C, flat);
}

void DwStridingSubsampling::forward(ThreadTeam& team, Arena& arena, const float* mel, int64_t T,
                                    float* out) const {
    const int64_t frames = output_frames(T, causal_);
    for (int64_t begin = 0; begin < frames; begin += kChunkFrames) {
        ArenaScope scope(arena);
        const int64_t end = std::min(frames, begin + kChunkFrames);
        float* flat = arena.alloc_array<float>(static_cast<size_t>((end - begin) * feature_size()));
        features(team, arena, mel, T, begin, end, flat);
        project(team, arena, flat, end - begin, out + begin * out_.out(), {});
    }
}

}  // namespace pk
