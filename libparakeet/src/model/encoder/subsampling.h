// DwStridingSubsampling: NeMo's ConvSubsampling with subsampling 'dw_striding', factor 8 —
// the stage that turns log-mel frames into encoder frames (10 ms → 80 ms).
//
//   mel [T, F] ─ conv.0 Conv2d(1→C, 3×3, s2) ─ ReLU
//              ─ conv.2 depthwise 3×3 s2 ─ conv.3 pointwise 1×1 ─ ReLU
//              ─ conv.5 depthwise 3×3 s2 ─ conv.6 pointwise 1×1 ─ ReLU
//              ─ flatten each frame channel-major (C·F'') ─ out Linear → [T'', d_model]
//
// Causal subsampling (cache-aware models, NeMo's CausalConv2D): every 3×3 stride-2 conv pads 2
// before and 1 after in both time and frequency instead of 1 and 1. That is the same conv on
// the input with one zero row and one zero column put in front, so the pad-1 kernels run it on
// such a shifted copy: output row r reads input rows 2r-2 .. 2r, and a stage of n rows gives
// n / 2 + 1 (80 mel bins become 41, 21, 11).
//
// The input holds only valid mel frames, so NeMo's masking of padded time steps between the
// convs has nothing to mask: the result equals NeMo's on the valid frames.
//
// The stage runs in chunks of output frames. The first conv's output alone is 8·T/2 × F/2 × C
// floats (60 MB for 30 s at C = 256); a chunk needs only its own rows plus a one-row halo per
// conv, so the arena stays a few MB whatever the length. Every output value is computed
// by the same kernels from the same inputs as without chunking, so the results are the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/layers/linear.h"
#include "model/model_config.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk {

class DwStridingSubsampling {
public:
    DwStridingSubsampling(const TensorLoader& t, const EncoderConfig& cfg);

    // Number of output frames for `mel_frames` input frames (NeMo's calc_length, three times).
    static int64_t output_frames(int64_t mel_frames, bool causal);
    int64_t output_frames(int64_t mel_frames) const { return output_frames(mel_frames, causal_); }
    bool causal() const { return causal_; }

    // mel: [T, n_mels] time-major; out: [output_frames(T), d_model] (the pre-encode output,
    // before the x-scaling of the positional encoding).
    void forward(ThreadTeam& team, Arena& arena, const float* mel, int64_t T, float* out) const;

    // The stage in two halves, so that a batched streaming step projects the frames of many
    // streams at once. features(): the convolutions' output of frames [begin, end) flattened
    // channel-major, [end - begin, feature_size()] (a frame depends only on its receptive
    // field, so frames before `begin` are not computed); project(): the output Linear on rows
    // of features (RowPaths as in layers/linear.h).
    int64_t feature_size() const { return out_.in(); }
    void features(ThreadTeam& team, Arena& arena, const float* mel, int64_t T, int64_t begin, int64_t end,
                  float* flat) const;
    void project(ThreadTeam& team, Arena& arena, const float* flat, int64_t rows, float* out,
                 const RowPaths& paths) const {
        out_.forward(team, arena, flat, rows, out, paths);
    }

    // Output frames per chunk.
    static constexpr int64_t kChunkFrames = 32;

private:

    int64_t n_mels_;
    int64_t channels_;
    bool causal_;
    const kernels::KernelTable* kernels_;  // of the level the weights were packed for (TensorLoader)
    std::vector<float> conv0_w_, conv0_b_;          // packed [9, C]
    std::vector<float> dw1_w_, dw1_b_, dw2_w_, dw2_b_;  // packed [9, C]
    // A 1x1 conv + ReLU over a [P, C] channels-last map: the f32 kernel's panels, or (q8_0
    // models) a Linear quantised at load.
    struct Pointwise {
        std::vector<float> f32;  // empty when q8 is used
        const float* bias = nullptr;
        int64_t channels = 0;
        Linear q8;
        const kernels::KernelTable* kernels = nullptr;

        static Pointwise load(const TensorLoader& t, const std::string& name, int64_t C);
        void forward_relu(ThreadTeam& team, Arena& arena, const float* x, int64_t P, float* y) const;
    };
    Pointwise pw1_, pw2_;
    Linear out_;
};

}  // namespace pk
