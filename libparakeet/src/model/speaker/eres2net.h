// 3D-Speaker's ERes2Net speaker encoder (speakerlab/models/eres2net/ERes2Net.py) as
// voice-detect.cpp runs its ONNX export, every BatchNorm folded into the convolution before it:
//
//   stem      Conv2d(1 -> m, 3x3) -> ReLU on the fbank image [n_mels, T]
//   stages    4 stages of Res2Net blocks (voicedetect.eres2net.num_blocks): conv1 (1x1, the
//             block's stride) -> act; its `scale` chunks of `width` channels: chunk 0 through
//             conv 0 (3x3) -> act, chunk i through conv i with the previous chunk's output added
//             (stages 1-2) or fused by AFF (stages 3-4); side by side -> conv3 (1x1) -> +
//             shortcut (a 1x1 conv with the block's stride where the shape changes) -> act.
//             act is Hardtanh(0, relu_clamp).
//   fusion    bottom-up: a 3x3 stride-2 convolution (no bias) of the fused shallower output,
//             AFF-merged into the outputs of stages 2, 3 and 4
//   AFF(x, y) a = 1 + tanh(conv (1x1) of SiLU(conv (1x1) of [x, y])); x * a + y * (2 - a), run
//             as 2 (y + s (x - y)) with s = sigmoid(2 z) on the level's kernels
//   head      stats_head.h: the time mean and unbiased std, then seg_1
//
// The convolutions come from the file's flat list (voicedetect.eres2net.conv_weight, _bias,
// _stride) in the order the forward runs them, as voice-detect.cpp's converter lists them; the
// widths come from their shapes. A block runs a band of 32 time rows at a time, its 3x3 chunk
// convolutions over the band and a halo row each that the next one reads, so that its maps stay
// in the cache (the bands depend on T alone); the team's threads take whole bands. Results are
// bitwise identical for any team size at a level.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/gguf_reader.h"
#include "kernels/kernel_table.h"
#include "model/speaker/band_workers.h"
#include "model/speaker/conv2d_gemm.h"
#include "model/speaker/stats_head.h"
#include "model/tensor_loader.h"

namespace pk::speaker {

class ERes2Net {
public:
    // Builds the network for `n_mels`-bin features. Throws ModelError when a key or tensor is
    // missing, the list holds more or fewer convolutions than the forward runs, or a shape does
    // not fit the others.
    static ERes2Net load(const GgufReader& gguf, const TensorLoader& t, int64_t n_mels);

    int64_t n_mels() const { return n_mels_; }
    int64_t embedding_dim() const { return head_.embedding_dim(); }
    // The fewest feature frames that leave two time steps to pool.
    int64_t min_frames() const { return min_frames_; }

    // The embedding of `feats` [T, n_mels] into out[embedding_dim], T >= min_frames().
    void forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* out) const;

private:
    struct Map;
    struct Aff {
        Conv2dGemm squeeze, expand;
    };
    struct Block {
        Conv2dGemm conv1, conv3;
        std::vector<Conv2dGemm> convs;  // one per chunk
        std::vector<Aff> fuse;          // AFF stages: one per chunk after the first
        bool has_shortcut = false;
        Conv2dGemm shortcut;
    };
    class Cursor;
    static Block load_block(Cursor& next, int64_t in, bool aff, int64_t scale);
    static Aff load_aff(Cursor& next, int64_t channels);

    class BlockRun;  // a block's buffers on one thread, run a band of rows at a time

    Map run_stage(ThreadTeam& team, Arena& arena, const std::vector<Block>& stage, const Map& x) const;
    void run_block(ThreadTeam& team, Arena& arena, const Block& b, const Map& x, const Map& y) const;
    // AFF(x, y) of both = [x, y] side by side (x channels [0, C), y [C, 2C)) into a new map.
    Map run_aff(ThreadTeam& team, Arena& arena, const Aff& a, const Map& both) const;
    Map run_conv(ThreadTeam& team, Arena& arena, const Conv2dGemm& c, const Map& x, bool relu = false) const;
    int64_t pooled_steps(int64_t T) const;

    const kernels::KernelTable* kernels_ = nullptr;  // the level's SiLU, sigmoid and row passes
    int64_t n_mels_ = 0, min_frames_ = 0, scale_ = 2;
    float clamp_ = 20.0f;
    Conv2dGemm stem_;
    std::vector<Block> stages_[4];
    Conv2dGemm down_[3];
    Aff fuse_[3];
    StatsHead head_;
};

}  // namespace pk::speaker
