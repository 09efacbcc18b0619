// A square 2-D convolution with bias (a BatchNorm folded in, as the ONNX exports of the 2-D
// speaker encoders have it), zero padding (kernel - 1) / 2 and one stride for both axes, on
// channels-last maps: a C-channel map [T, F, C] holds element (t, f, c) at (t * F + f) * C + c,
// which is PyTorch's NCHW x[c][f][t] of a [B, C, F, T] input (F the frequency axis H, T the
// time axis W).
//
// It runs as matrix products: the input is unfolded (im2col) a band of output time steps at a
// time into rows of in * kernel * kernel values in PyTorch's weight order (column
// (c * kernel + i) * kernel + j is input channel c at frequency tap i and time tap j), so the
// stored weight [out, in, kernel, kernel] is the product's matrix as it is. F32 weights run on
// the level's pointwise-conv kernel (conv_pointwise.h: no copy of the rows into GEMM panels,
// bias and ReLU in its epilogue), their columns reordered at load to tap-major order
// ((i * kernel + j) * in + c), so that the unfolding copies each tap's channels as one run;
// other types on the matmul kernels, in any type whose blocks fit in * kernel * kernel, on the
// GEMM path for every band. Either way a row's bits depend on nothing but its input: results
// are bitwise identical for any team size. A 3x3 stride-1 convolution of F32 weights and at
// least two inputs runs by Winograd's F(4x4, 3x3) instead (winograd_conv3x3.h), with 36
// products per 4x4 outputs where the direct product takes 144.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "model/speaker/winograd_conv3x3.h"
#include "model/tensor_loader.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

class Conv2dGemm {
public:
    Conv2dGemm() = default;
    // The weight tensor `weight` ([out, in, k, k], ggml ne [k, k, in, out]; a 1x1 weight may be
    // stored [out, in]) and the F32 bias `bias` ([out]; "" for none). Throws ModelError when either is
    // missing, the weight takes other than `in` channels, or its kernel is not square and odd.
    static Conv2dGemm load(const GgufReader& gguf, const TensorLoader& t, const std::string& weight,
                           const std::string& bias, int64_t in, int stride);

    int64_t in() const { return in_; }
    int64_t out() const { return out_; }
    int stride() const { return stride_; }
    // The output length along an axis of `n` input positions (0 when none fits).
    int64_t output_size(int64_t n) const;

    // y [output_size(T), output_size(F), out] from x [T, F, in]; relu clamps y at 0. y must not
    // overlap x.
    void forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, float* y, bool relu) const;

private:
    // y [rows, out] = x [rows, in * kernel * kernel] W^T + bias, clamped at 0 when relu.
    void product(ThreadTeam& team, Arena& arena, const float* x, int64_t rows, float* y, bool relu) const;

    // The weight [out, in * kernel * kernel] in one of three forms (the others empty):
    std::shared_ptr<const std::vector<float>> pointwise_;   // F32 in the pointwise kernel's panels,
    std::shared_ptr<const kernels::PackedWeights> weight_;  // other types packed for matmul,
    std::shared_ptr<const WinogradConv3x3> winograd_;       // or the Winograd form
    const kernels::KernelTable* kernels_ = nullptr;
    const float* bias_ = nullptr;
    int64_t in_ = 0, out_ = 0;
    int kernel_ = 1, stride_ = 1;
};

}  // namespace pk::speaker
