#include "model/encoder/subsampling.h"

#include "kernels/conv_depthwise_weights.h"
#include "kernels/conv_pointwise.h"
#include "kernels/conv_subsampling.h"

namespace pk {
namespace {

using kernels::conv3x3_s2_output_size;

const std::string kPrefix = "encoder.pre_encode.";

// A 3×3 kernel with one input channel per output channel ([C, 1, 3, 3]), packed tap-major.
void load_3x3(const TensorLoader& t, const std::string& name, int64_t C, std::vector<float>& w,
              std::vector<float>& b) {
    const float* raw = t.f32(kPrefix + name + ".weight", {C, 1, 3, 3});
    w.resize(static_cast<size_t>(9 * C));
    kernels::pack_depthwise_weight(raw, C, 9, w.data());
    const float* bias = t.f32(kPrefix + name + ".bias", {C});
    b.assign(bias, bias + C);
}

void load_pointwise(const TensorLoader& t, const std::string& name, int64_t C, std::vector<float>& w,
                    const float*& b) {
    const float* raw = t.f32(kPrefix + name + ".weight", {C, C, 1, 1});
    w.resize(static_cast<size_t>(kernels::pointwise_conv_packed_size(C, C)));
    kernels::pointwise_conv_pack_weight(raw, C, C, w.data());
    b = t.f32(kPrefix + name + ".bias", {C});
}

}  // namespace

DwStridingSubsampling::DwStridingSubsampling(const TensorLoader& t, const EncoderConfig& cfg)
    : n_mels_(cfg.feat_in), channels_(cfg.subsampling_channels) {
    const int64_t C = channels_;
    load_3x3(t, "conv.0", C, conv0_w_, conv0_b_);
    load_3x3(t, "conv.2", C, dw1_w_, dw1_b_);
    load_pointwise(t, "conv.3", C, pw1_w_, pw1_b_);
    load_3x3(t, "conv.5", C, dw2_w_, dw2_b_);
    load_pointwise(t, "conv.6", C, pw2_w_, pw2_b_);
    int64_t f = n_mels_;
    for (int i = 0; i < 3; ++i) f = conv3x3_s2_output_size(f);
    out_ = Linear::load(t, kPrefix + "out", cfg.d_model, C * f, true);
}

int64_t DwStridingSubsampling::output_frames(int64_t mel_frames) {
    return conv3x3_s2_output_size(conv3x3_s2_output_size(conv3x3_s2_output_size(mel_frames)));
}

void DwStridingSubsampling::forward(ThreadTeam& team, Arena& arena, const float* mel, int64_t T,
                                    float* out) const {
    ArenaScope scope(arena);
    const int64_t C = channels_;
    const int64_t T1 = conv3x3_s2_output_size(T), F1 = conv3x3_s2_output_size(n_mels_);
    const int64_t T2 = conv3x3_s2_output_size(T1), F2 = conv3x3_s2_output_size(F1);
    const int64_t T3 = conv3x3_s2_output_size(T2), F3 = conv3x3_s2_output_size(F2);

    float* a1 = arena.alloc_array<float>(static_cast<size_t>(T1 * F1 * C));
    kernels::conv2d_3x3_s2_single_channel(team, mel, T, n_mels_, conv0_w_.data(), conv0_b_.data(), C,
                                          /*relu=*/true, a1);

    float* d2 = arena.alloc_array<float>(static_cast<size_t>(T2 * F2 * C));
    kernels::depthwise_conv2d_3x3_s2(team, a1, T1, F1, C, dw1_w_.data(), dw1_b_.data(), d2);
    float* a2 = arena.alloc_array<float>(static_cast<size_t>(T2 * F2 * C));
    kernels::pointwise_conv(team, d2, T2 * F2, C, pw1_w_.data(), C, pw1_b_, /*relu=*/true, a2);

    float* d3 = arena.alloc_array<float>(static_cast<size_t>(T3 * F3 * C));
    kernels::depthwise_conv2d_3x3_s2(team, a2, T2, F2, C, dw2_w_.data(), dw2_b_.data(), d3);
    float* a3 = arena.alloc_array<float>(static_cast<size_t>(T3 * F3 * C));
    kernels::pointwise_conv(team, d3, T3 * F3, C, pw2_w_.data(), C, pw2_b_, /*relu=*/true, a3);

    float* flat = arena.alloc_array<float>(static_cast<size_t>(T3 * C * F3));
    kernels::flatten_channel_major(team, a3, T3, F3, C, flat);
    out_.forward(team, arena, flat, T3, out);
}

}  // namespace pk
