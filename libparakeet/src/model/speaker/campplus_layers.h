// The layers of 3D-Speaker's CAM++ (campplus.h), on channel-innermost activations: a map of
// H x W positions holds x[(h * W + w) * ld + c] (the head's 2-D maps are H = frequency,
// W = time; the 1-D backbone is H = 1, W = time, so x[t * ld + c]).
//
//   ConvGemm       a PyTorch Conv1d / Conv2d with zero padding, any stride and (along W) any
//                  dilation, named by its weight tensor and optional bias (a BatchNorm folded
//                  in by the converter). It runs as matrix products of the unfolded input
//                  [positions, taps * in] with the weight, which is reordered at load from
//                  PyTorch's [out, in, kh, kw] to [out, kh, kw, in] so that the unfolding copies
//                  whole channel runs. Positions are unfolded in blocks of a fixed size, so the
//                  scratch memory does not grow with the audio.
//   ChannelAffine  a BatchNorm in eval mode folded into one scale and shift per channel.
//
// Every output element is computed by one thread with the same code, so results are bitwise
// identical for any team size at a given ISA level.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "kernels/matmul.h"
#include "model/tensor_loader.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

// Runs fn(first, last) over [0, rows) split into one contiguous range per thread (fewer when a
// range would have under `min_rows` rows). Each row is processed by one thread with the same
// code, whatever the split.
template <class Fn>
void for_rows(ThreadTeam& team, int64_t rows, int64_t min_rows, Fn&& fn) {
    const int64_t parts = std::min<int64_t>(team.size(), std::max<int64_t>(1, rows / min_rows));
    if (parts == 1) {
        fn(int64_t{0}, rows);
        return;
    }
    team.run([&](int ith, int) {
        if (ith < parts) fn(rows * ith / parts, rows * (ith + 1) / parts);
    });
}

// The team and one scratch arena per thread of it: thread 0 uses the caller's, the others their
// own, kept for a whole forward pass so that each settles at its largest size once.
class TeamScratch {
public:
    TeamScratch(ThreadTeam& team, Arena& caller);
    ThreadTeam& team() const { return team_; }
    Arena& arena(int ith) const { return ith == 0 ? caller_ : *own_[static_cast<size_t>(ith - 1)]; }

private:
    ThreadTeam& team_;
    Arena& caller_;
    std::vector<std::unique_ptr<Arena>> own_;
};

// Where a convolution's kernel moves over an H x W map: stride and padding per axis, and the
// dilation along W (CAM++ dilates only its time convolutions).
struct ConvGeometry {
    int stride_h = 1, stride_w = 1;
    int pad_h = 0, pad_w = 0;
    int dilation_w = 1;
};

// A Conv weight's PyTorch shape [out, in, kh, kw] (kh = 1 for a Conv1d), from its stored
// ne [kw, in, out], [kw, kh, in, out], or a 1x1 kernel's [in, out] matrix. Throws ModelError
// when the tensor is missing or has another rank.
struct KernelShape {
    int64_t out = 0, in = 0;
    int kh = 1, kw = 1;
};
KernelShape kernel_shape(const GgufReader& gguf, const TensorLoader& t, const std::string& name);

class ConvGemm {
public:
    ConvGemm() = default;
    // The weight `weight` (PyTorch [out, in, kw] for a Conv1d, [out, in, kh, kw] for a Conv2d;
    // a 1x1 kernel may be stored as a 2-D [out, in] matrix, in any matrix type; larger kernels
    // must be F32) and, unless `bias` is empty, its bias [out] (F32). `in` is the input width
    // the network has at this point. Throws ModelError when a tensor is missing or does not fit.
    static ConvGemm load(const GgufReader& gguf, const TensorLoader& t, const std::string& weight,
                         const std::string& bias, int64_t in, ConvGeometry geometry);

    int64_t in() const { return in_; }
    int64_t out() const { return out_; }
    int kernel_h() const { return kh_; }
    int kernel_w() const { return kw_; }
    int64_t out_h(int64_t H) const { return (H + 2 * g_.pad_h - kh_) / g_.stride_h + 1; }
    int64_t out_w(int64_t W) const {
        return (W + 2 * g_.pad_w - g_.dilation_w * (kw_ - 1) - 1) / g_.stride_w + 1;
    }

    // y[(oh * out_w + ow) * ldy + o] over the out_h(H) x out_w(W) positions (max(., 0) when
    // `relu`), from x[(h * W + w) * ldx + c] for c < in(). Each thread takes a range of
    // positions and runs it alone (unfolding, products on the GEMM path, ReLU): one team
    // wake-up per convolution, and a position's bits do not depend on the ranges.
    void forward(const TeamScratch& scratch, const float* x, int64_t H, int64_t W, int64_t ldx, float* y,
                 int64_t ldy, bool relu) const;

private:
    void unfold(const float* x, int64_t H, int64_t W, int64_t ldx, int64_t first, int64_t rows, float* cols) const;
    void forward_rows(Arena& arena, const float* x, int64_t H, int64_t W, int64_t ldx, int64_t first, int64_t last,
                      float* y, int64_t ldy, bool relu) const;

    std::shared_ptr<const kernels::PackedWeights> weight_;  // [out, kh * kw * in]
    const float* bias_ = nullptr;
    int64_t in_ = 0, out_ = 0;
    int kh_ = 1, kw_ = 1;
    ConvGeometry g_;
};

class ChannelAffine {
public:
    ChannelAffine() = default;
    // BatchNorm `<prefix>.{weight,bias,running_mean,running_var}`, each [channels], F32.
    static ChannelAffine load(const TensorLoader& t, const std::string& prefix, int64_t channels, float eps);
    // An affine-free BatchNorm from its statistics alone (weight 1, bias 0).
    static ChannelAffine load_statistics(const TensorLoader& t, const std::string& mean, const std::string& var,
                                         int64_t channels, float eps);

    int64_t channels() const { return static_cast<int64_t>(scale_.size()); }
    // y[t * ldy + c] = x[t * ldx + c] * scale[c] + shift[c] (then max(., 0) when `relu`), for
    // t < T, c < channels, split over the team by frames; y may be x.
    void apply(ThreadTeam& team, const float* x, int64_t T, int64_t ldx, float* y, int64_t ldy, bool relu) const;

private:
    static ChannelAffine fold(const TensorLoader& t, const std::string& what, const float* weight, const float* bias,
                              const float* mean, const float* var, int64_t channels, float eps);

    std::vector<float> scale_, shift_;
};

}  // namespace pk::speaker
