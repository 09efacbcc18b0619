// CAM++, 3D-Speaker's speaker encoder (modelscope models/audio/sv/DTDNN.py, CAMPPlus), in eval
// mode on Kaldi fbank features [T, n_mels]:
//
//   head (FCM)    a 2-D ResNet over (frequency, time): 3x3 conv -> ReLU, two stages of two
//                   BasicResBlocks (the first of each halves the frequency axis and has a 1x1
//                   shortcut conv), a 3x3 conv halving frequency again -> ReLU; its C channels
//                   x F / 8 bins become C * F / 8 features per frame (channel-major)
//   tdnn          Conv1d kernel 5, stride 2 -> ReLU: T' = (T - 1) / 2 + 1 frames
//   blocks 1..3   densely connected CAM layers (dilation 1, 2, 2), each appending its
//                   output to its input: BN -> ReLU -> 1x1 conv -> ReLU -> the CAM layer:
//                   y = local conv (kernel 3, dilated) of its input, scaled per channel by a
//                   mask sigmoid(conv(ReLU(conv(context)))), where the context is the input's
//                   time mean plus the mean of its 100-frame segment (the last, shorter
//                   segment averages the frames it has, as PyTorch's avg_pool1d does)
//   transits      after each block: BN -> ReLU -> 1x1 conv halving the width; ReLU after the last
//   pooling       per channel, the time mean and unbiased std
//   dense         1x1 conv to the embedding, then an affine-free BatchNorm
//
// The weights are voice-detect.cpp's `voicedetect.campplus.*` manifest: every convolution's
// weight and bias name (bias "" where none) and every affine BatchNorm's prefix, in forward order,
// plus the embedding BatchNorm's statistics. A BatchNorm that directly follows a convolution is
// folded into it (the bias). Widths and kernels come from the tensor shapes and the number of CAM
// layers per block from the manifest (a layer's second convolution has a kernel wider than 1, a
// transit is a lone 1x1), so smaller CAM++ variants load too; the head's shape and the dilations
// are CAM++'s. Results are bitwise identical for any team size at a given ISA level.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/speaker/campplus_layers.h"
#include "model/speaker/conv2d_gemm.h"
#include "model/tensor_loader.h"

namespace pk::speaker {

class CamPPlus {
public:
    // Builds the network for features of `n_mels` bins from `gguf`'s manifest and tensors.
    // Throws ModelError when the manifest is missing or malformed, or a tensor is missing or
    // does not fit.
    static CamPPlus load(const GgufReader& gguf, const TensorLoader& t, int64_t n_mels);

    int64_t n_mels() const { return n_mels_; }
    int64_t embedding_dim() const { return dense_.out(); }
    // The fewest feature frames with a standard deviation to pool: two after the stride-2 tdnn.
    int64_t min_frames() const { return 3; }

    // The embedding (before any normalisation) of `feats` [T, n_mels] into out[embedding_dim].
    // Throws InvalidAudio ("too little audio ...") when T < min_frames().
    void forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* out) const;

private:
    struct ResBlock {
        Conv2dGemm conv1, conv2;
        bool has_shortcut = false;
        Conv2dGemm shortcut;
    };
    struct CamLayer {
        ChannelAffine norm;   // nonlinear1
        Conv2dGemm linear1;     // with nonlinear2's BatchNorm folded in
        Conv2dGemm local;       // cam_layer.linear_local
        Conv2dGemm mask1, mask2;  // cam_layer.linear1, cam_layer.linear2
    };
    struct DenseBlock {
        int64_t in = 0, width = 0;  // input channels, and with every layer's output appended
        std::vector<CamLayer> layers;
        ChannelAffine transit_norm;
        Conv2dGemm transit;
    };
    class Manifest;

    // head -> time-major [T, head width] features.
    void head_forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* y) const;
    // The block over cat[T', width] (ld width), whose first `in` columns hold its input.
    void block_forward(ThreadTeam& team, Arena& arena, const DenseBlock& b, float* cat, int64_t T) const;
    void cam_forward(ThreadTeam& team, Arena& arena, const CamLayer& l, const float* x, int64_t T, float* y,
                     int64_t ldy) const;

    int64_t n_mels_ = 0;
    Conv2dGemm head_conv1_;
    std::vector<ResBlock> head_blocks_;
    Conv2dGemm head_conv2_;
    Conv2dGemm tdnn_;
    std::vector<DenseBlock> blocks_;
    Conv2dGemm dense_;
    ChannelAffine embedding_norm_;
};

}  // namespace pk::speaker
