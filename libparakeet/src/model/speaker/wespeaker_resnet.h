// WeSpeaker's ResNet34 speaker encoder (wespeaker/models/resnet.py; voxceleb_resnet34_LM) as
// voice-detect.cpp runs its ONNX export, every BatchNorm folded into the convolution before it:
//
//   stem        Conv2d(1 -> C0, 3x3, stride 1) -> ReLU, on the fbank image [n_mels, T]
//   blocks      BasicBlocks in order: conv1 (3x3, the block's stride) -> ReLU -> conv2 (3x3)
//               -> + shortcut (the input, or a 1x1 `down` conv with the block's stride)
//               -> ReLU
//   pooling     per channel and frequency bin of the last map [C, F', T']: the time mean and
//               the unbiased std sqrt(var + var_eps), flattened channel-major, means then stds
//   seg         Linear(2 * C * F' -> embedding_dim), minus mean_vec (when the file has one)
//
// The layer list is the file's manifest (voicedetect.resnet.*: tensor names per block and the
// strides; voicedetect_schema.h); widths come from the tensors' shapes, so any depth and width
// loads. Blocks of the published shapes run a band of time rows at a time
// (residual_block_bands.h). Results are bitwise identical for any team size at a given ISA level.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/speaker/conv2d_gemm.h"
#include "model/speaker/residual_block_bands.h"
#include "model/speaker/stats_head.h"
#include "model/tensor_loader.h"

namespace pk::speaker {

class WespeakerResnet {
public:
    // Builds the network for `n_mels`-bin features from `gguf`'s manifest and tensors. Throws
    // ModelError when a key or tensor is missing or a shape does not fit the others.
    static WespeakerResnet load(const GgufReader& gguf, const TensorLoader& t, int64_t n_mels);

    int64_t n_mels() const { return n_mels_; }
    int64_t embedding_dim() const { return head_.embedding_dim(); }
    // The fewest feature frames that leave two time steps to pool (the std is unbiased).
    int64_t min_frames() const { return min_frames_; }

    // The embedding (before any normalisation) of `feats` [T, n_mels] into out[embedding_dim],
    // for T >= min_frames() (the speaker encoder checks).
    void forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* out) const;

private:
    struct Block {
        Conv2dGemm conv1, conv2;
        bool has_down = false;
        Conv2dGemm down;
        bool banded = false;  // run_residual_block_in_bands runs it
        ResidualBlock residual() const { return {conv1, conv2, has_down ? &down : nullptr}; }
    };
    // The time steps left after the stem and every block from T frames.
    int64_t pooled_steps(int64_t T) const;

    int64_t n_mels_ = 0, min_frames_ = 0;
    Conv2dGemm stem_;
    std::vector<Block> blocks_;
    StatsHead head_;
    const float* mean_vec_ = nullptr;  // null when the file has none
};

}  // namespace pk::speaker
