// ECAPA-TDNN, SpeechBrain's speaker encoder (speechbrain/lobes/models/ECAPA_TDNN.py, the
// network of speechbrain/spkrec-ecapa-voxceleb), in eval mode on Kaldi fbank features:
//
//   blocks.0      TdnnBlock(n_mels -> C0, kernel k0, dilation 1)
//   blocks.i      SE-Res2Net block, i = 1..N (dilation i + 1):
//                   tdnn1 (1x1) -> Res2Net (scale s: chunk 0 passes, chunk j runs
//                   TdnnBlock(w -> w, kernel k, dilation) on chunk j plus the previous chunk's
//                   output from j = 2) -> tdnn2 (1x1) -> squeeze-excitation (time mean ->
//                   conv1 -> ReLU -> conv2 -> sigmoid, a gain per channel) -> + residual
//                   (the input, or a 1x1 `shortcut` conv where the widths differ)
//   mfa           TdnnBlock over the blocks 1..N outputs side by side
//   asp           attentive statistics pooling with global context: per channel, the time
//                   mean and std of x beside x -> TdnnBlock -> tanh -> 1x1 conv -> softmax
//                   over time -> weighted mean and std (variances floored at 1e-12); the
//                   TdnnBlock's product over the mean and std, the same at every frame, is
//                   computed once (AspTdnn)
//   asp_bn, fc    BatchNorm of the pooled [mean, std], then a 1x1 conv to the embedding
//
// Every width, kernel and count is read from the tensors' shapes (SpeechBrain's state-dict
// names verbatim, as voice-detect.cpp's converter stores them), so any ECAPA_TDNN
// configuration loads; the dilation of block i is i + 1, as in SpeechBrain's default and
// voice-detect.cpp. Results are bitwise identical for any team size at a given ISA level.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/speaker/tdnn_layers.h"
#include "model/tensor_loader.h"

namespace pk::speaker {

class EcapaTdnn {
public:
    // Builds the network from `gguf`'s tensors. Throws ModelError when one is missing or has
    // a shape that does not fit the others.
    static EcapaTdnn load(const GgufReader& gguf, const TensorLoader& t);

    int64_t n_mels() const { return n_mels_; }
    int64_t embedding_dim() const { return fc_.out(); }
    // The fewest feature frames the reflect padding of every convolution accepts.
    int64_t min_frames() const { return min_frames_; }

    // The embedding (before any normalisation) of `feats` [T, n_mels] into out[embedding_dim].
    // Throws InvalidAudio ("too little audio ...") when T < min_frames().
    void forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* out) const;

private:
    struct SeRes2NetBlock {
        int64_t in = 0, channels = 0;
        TdnnBlock tdnn1, tdnn2;
        std::vector<TdnnBlock> res2net;  // scale - 1 blocks over chunks 1..scale-1
        Conv1dSame se_conv1, se_conv2;
        bool has_shortcut = false;
        Conv1dSame shortcut;
    };
    void block_forward(ThreadTeam& team, Arena& arena, const SeRes2NetBlock& b, const float* x, int64_t T,
                       int64_t ldx, float* y, int64_t ldy) const;
    void pool(ThreadTeam& team, Arena& arena, const float* x, int64_t T, float* pooled) const;

    // asp.tdnn, the TdnnBlock over [x, mean, std] of every frame, split by its input columns:
    // the mean and std are the same at every frame, so their share of the convolution is one
    // matrix-vector product per call, added as the bias of the product over x.
    struct AspTdnn {
        std::shared_ptr<const kernels::PackedWeights> over_x, over_stats;  // [A, C], [A, 2C]
        const float* bias = nullptr;
        BatchNormEval norm;
        int64_t out = 0;
    };
    static AspTdnn load_asp_tdnn(const TensorLoader& t, int64_t C, int64_t A);

    int64_t n_mels_ = 0;
    TdnnBlock block0_;
    std::vector<SeRes2NetBlock> blocks_;
    TdnnBlock mfa_;
    AspTdnn asp_tdnn_;
    Conv1dSame asp_conv_;
    BatchNormEval asp_bn_;
    Conv1dSame fc_;
    int64_t min_frames_ = 1;
};

}  // namespace pk::speaker
