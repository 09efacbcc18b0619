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
    : n_mels_(cfg.feat_in), channels_(cfg.subsampling_channels), kernels_(&t.kernels()) {
    const int64_t C = channels_;
    load_3x3(t, schema::kSubsamplingConv0, C, conv0_w_, conv0_b_);
    load_3x3(t, schema::kSubsamplingDepthwise1, C, dw1_w_, dw1_b_);
    pw1_ = Pointwise::load(t, schema::kSubsamplingPointwise1, C);
    load_3x3(t, schema::kSubsamplingDepthwise2, C, dw2_w_, dw2_b_);
    pw2_ = Pointwise::load(t, schema::kSubsamplingPointwise2, C);
    int64_t f = n_mels_;
    for (int i = 0; i < 3; ++i) f = conv3x3_s2_output_size(f);
    out_ = Linear::load(t, schema::subsampling_module(schema::kSubsamplingOut), cfg.d_model, C * f, true);
}

int64_t DwStridingSubsampling::output_frames(int64_t mel_frames) {
    return conv3x3_s2_output_size(conv3x3_s2_output_size(conv3x3_s2_output_size(mel_frames)));
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

void DwStridingSubsampling::forward_chunk(ThreadTeam& team, Arena& arena, const float* mel, int64_t T,
                                          int64_t begin, int64_t end, float* out) const {
    ArenaScope scope(arena);
    const int64_t C = channels_, F0 = n_mels_;
    const int64_t T1 = conv3x3_s2_output_size(T), F1 = conv3x3_s2_output_size(F0);
    const int64_t T2 = conv3x3_s2_output_size(T1), F2 = conv3x3_s2_output_size(F1);
    const int64_t F3 = conv3x3_s2_output_size(F2);
    // Work backwards: which rows each stage must produce for outputs [begin, end).
    const InputBlock b3 = input_block(begin, end, T2);     // stage-2 rows [b3.lo, b3.hi)
    const InputBlock b2 = input_block(b3.lo, b3.hi, T1);   // stage-1 rows [b2.lo, b2.hi)
    const InputBlock b1 = input_block(b2.lo, b2.hi, T);    // mel rows [b1.lo, b1.hi)

    // Stage 1: conv.0 + ReLU on mel rows [b1.lo, b1.hi); keep stage-1 rows [b2.lo, b2.hi).
    const int64_t n1 = conv3x3_s2_output_size(b1.hi - b1.lo);
    float* a1 = arena.alloc_array<float>(static_cast<size_t>(n1 * F1 * C));
    kernels::conv2d_3x3_s2_single_channel(*kernels_, team, mel + b1.lo * F0, b1.hi - b1.lo, F0, conv0_w_.data(),
                                          conv0_b_.data(), C, /*relu=*/true, a1);
    const float* s1 = a1 + b1.skip * F1 * C;

    // Stage 2: depthwise on stage-1 rows [b2.lo, b2.hi); keep rows [b3.lo, b3.hi); pointwise + ReLU.
    const int64_t rows2 = b3.hi - b3.lo;
    const int64_t n2 = conv3x3_s2_output_size(b2.hi - b2.lo);
    float* d2 = arena.alloc_array<float>(static_cast<size_t>(n2 * F2 * C));
    kernels::depthwise_conv2d_3x3_s2(*kernels_, team, s1, b2.hi - b2.lo, F1, C, dw1_w_.data(), dw1_b_.data(), d2);
    float* a2 = arena.alloc_array<float>(static_cast<size_t>(rows2 * F2 * C));
    pw1_.forward_relu(team, arena, d2 + b2.skip * F2 * C, rows2 * F2, a2);

    // Stage 3: depthwise on stage-2 rows [b3.lo, b3.hi); keep rows [begin, end); pointwise + ReLU.
    const int64_t rows3 = end - begin;
    const int64_t n3 = conv3x3_s2_output_size(rows2);
    float* d3 = arena.alloc_array<float>(static_cast<size_t>(n3 * F3 * C));
    kernels::depthwise_conv2d_3x3_s2(*kernels_, team, a2, rows2, F2, C, dw2_w_.data(), dw2_b_.data(), d3);
    float* a3 = arena.alloc_array<float>(static_cast<size_t>(rows3 * F3 * C));
    pw2_.forward_relu(team, arena, d3 + b3.skip * F3 * C, rows3 * F3, a3);

    float* flat = arena.alloc_array<float>(static_cast<size_t>(rows3 * C * F3));
    kernels::flatten_channel_major(team, a3, rows3, F3, C, flat);
    out_.forward(team, arena, flat, rows3, out + begin * out_.out());
}

void DwStridingSubsampling::forward(ThreadTeam& team, Arena& arena, const float* mel, int64_t T,
                                    float* out) const {
    const int64_t frames = output_frames(T);
    for (int64_t begin = 0; begin < frames; begin += kChunkFrames)
        forward_chunk(team, arena, mel, T, begin, std::min(frames, begin + kChunkFrames), out);
}

}  // namespace pk
