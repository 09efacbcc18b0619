// The layers of SpeechBrain's TDNN speaker encoders (speechbrain/lobes/models/ECAPA_TDNN.py),
// on time-major activations: x[t * ld + c] is channel c of frame t.
//
//   Conv1dSame   speechbrain.nnet.CNN.Conv1d: stride 1, padding "same" in reflect mode (the
//                frame before the first is frame 1, not a copy of frame 0), with bias. It runs
//                as one matrix product of the unfolded input [T, in * kernel] with the weight
//                [out, in * kernel], on the level's matmul kernels. An F32 weight's columns are
//                reordered at load to tap-major order (column j * in + c is input channel c at
//                tap j), so that the unfolding copies whole channel runs; a stored quantised one
//                keeps PyTorch's (c * kernel + j). A Q8_0 weight whose blocks are each one tap's
//                run of 32 channels (tap-major columns or kernel 1, `in` a multiple of 32) takes its
//                input quantised once per frame (kernels/matmul_q8_rows.h), and the product
//                gathers each tap's int8 blocks from it, where the unfolded rows would quantise
//                every value once per tap: the same bits as matmul() on the unfolded floats.
//   BatchNormEval  BatchNorm1d in eval mode: (x - running_mean) / sqrt(running_var + 1e-5)
//                * weight + bias, folded into one scale and shift per channel at load.
//   TdnnBlock    Conv1dSame -> ReLU -> BatchNormEval (SpeechBrain's TDNNBlock).
//
// Every output element is computed by one thread with the same code, so results are bitwise
// identical for any team size at a given ISA level.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "model/tensor_loader.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

class Conv1dSame {
public:
    Conv1dSame() = default;
    // `<prefix>.conv.weight` ([out, in, kernel]; [out, in] when kernel is 1) and
    // `<prefix>.conv.bias` ([out], F32). kernel must be odd. Throws ModelError on other shapes.
    // With the loader's q8_at_load (a quantised speaker model, LoadOptions::q8_all), an F32
    // weight is quantised to Q8_0 at load, its rows of in * kernel padded with zeros to whole
    // Q8_0 blocks.
    static Conv1dSame load(const TensorLoader& t, const std::string& prefix, int64_t in, int64_t out,
                           int kernel, int dilation);

    int64_t in() const { return in_; }
    int64_t out() const { return out_; }
    int kernel() const { return kernel_; }
    // Frames the reflect padding needs: T must exceed (kernel - 1) / 2 * dilation.
    int64_t min_frames() const { return 1 + (kernel_ - 1) / 2 * dilation_; }

    // y[t * ldy + o] for t < T, o < out, from x[t * ldx + c]. Throws std::invalid_argument when
    // T is below min_frames().
    void forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t ldx, float* y,
                 int64_t ldy) const;

private:
    std::shared_ptr<const kernels::PackedWeights> weight_;  // [out, cols_]
    int64_t cols_ = 0;  // the product's columns: in * kernel, padded to whole Q8_0 blocks
    bool tap_major_ = false;  // the columns in tap-major order, else PyTorch's
    bool q8_map_ = false;     // Q8_0 blocks that are one tap's channels: quantise the input once
    const float* bias_ = nullptr;
    int64_t in_ = 0, out_ = 0;
    int kernel_ = 1, dilation_ = 1;
};

class BatchNormEval {
public:
    BatchNormEval() = default;
    // `<prefix>.{weight,bias,running_mean,running_var}`, each [channels], F32.
    static BatchNormEval load(const TensorLoader& t, const std::string& prefix, int64_t channels);

    int64_t channels() const { return static_cast<int64_t>(scale_.size()); }
    // x[t * ld + c] = (relu ? max(x, 0) : x) * scale[c] + shift[c], for t < T, c < channels, the
    // frames split over the team.
    void apply(ThreadTeam& team, float* x, int64_t T, int64_t ld, bool relu) const;
    // The same for one frame's channels, row[0, channels): for a caller that fuses it with its
    // own pass over the frames.
    void apply_row(float* row, bool relu) const {
        for (int64_t c = 0; c < channels(); ++c) {
            const float v = relu ? std::max(row[c], 0.0f) : row[c];
            row[c] = v * scale_[c] + shift_[c];
        }
    }

private:
    std::vector<float> scale_, shift_;
};

class TdnnBlock {
public:
    TdnnBlock() = default;
    // `<prefix>.conv.*` and `<prefix>.norm.norm.*`.
    static TdnnBlock load(const TensorLoader& t, const std::string& prefix, int64_t in, int64_t out, int kernel,
                          int dilation);

    int64_t out() const { return conv_.out(); }
    int64_t min_frames() const { return conv_.min_frames(); }
    // Its two parts, for a caller that fuses the normalisation with a pass of its own.
    const Conv1dSame& conv() const { return conv_; }
    const BatchNormEval& norm() const { return norm_; }
    void forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t ldx, float* y,
                 int64_t ldy) const {
        conv_.forward(team, arena, x, T, ldx, y, ldy);
        norm_.apply(team, y, T, ldy, /*relu=*/true);
    }

private:
    Conv1dSame conv_;
    BatchNormEval norm_;
};

}  // namespace pk::speaker
