// The convolution of the speaker encoders (ResNet34, ERes2Net and CAM++), with bias (a BatchNorm
// folded in by the converter) and zero padding, on channels-last maps: a C-channel map [T, F, C]
// holds element (t, f, c) at (t * F + f) * ldx + c (ldx >= C), which is PyTorch's NCHW x[c][f][t]
// of a [B, C, F, T] input (F the frequency axis H, T the time axis W). A Conv1d over time is the
// map with F = 1: x[t * ldx + c].
//
// The weight is PyTorch's [out, in, kf, kt] (kf taps along F, kt along T; a Conv1d's [out, in,
// kt] has kf = 1, and a 1x1 kernel may be stored as its [out, in] matrix). It runs by one of:
//   stem       a 3x3, padding-1 kernel of F32 weights with bias, one input channel and the same
//              stride (1 or 2) along both axes (the networks' first convolution): the level's
//              direct single-channel kernel (kernels/conv_subsampling.h), 9 multiply-adds per
//              output where an unfolding copied 9 values per position for a product of K = 9;
//   Winograd   a 3x3, stride-1, padding-1 kernel of F32 weights and at least two inputs:
//              F(4x4, 3x3) (winograd_conv3x3.h), 36 products per 4x4 outputs where the direct
//              product takes 144; in a quantised file with `in` a multiple of 32, on a level
//              whose int8 products pay (WinogradConv3x3::int8_pays), the products are Q8_0;
//   pointwise  other F32 weights: the level's pointwise-conv kernel (conv_pointwise.h: no copy of
//              the rows into GEMM panels, bias and ReLU in its epilogue) on the map itself for a
//              1x1 kernel that moves one step at a time, else on the input unfolded (im2col) a
//              band of output rows at a time, its columns in tap-major order ((i * kt + j) * in
//              + c, the weight reordered so at load) so that each tap's channels copy as one run;
//   matmul     other types (1x1 kernels, or rows of in * kf * kt whole blocks) on the matmul
//              kernels' GEMM path, on the input unfolded in PyTorch's column order
//              ((c * kf + i) * kt + j) where the kernel needs it; and, in a quantised file
//              (TensorLoader::q8_at_load), the F32 weights of the pointwise form whose rows are
//              whole Q8_0 blocks, quantised at load in their tap-major order.
//   Q8_0 weights whose blocks are each one tap's run of 32 channels (tap-major columns, or one
//   tap, and `in` a multiple of 32) take their input map quantised once (kernels/
//   matmul_q8_rows.h), and the product gathers its int8 blocks tap by tap, where the unfolded
//   rows would hold at least half the map's values (quantising them quantised each value once
//   per tap); a 1x1 kernel with stride 2 along both axes, which reads a quarter of the map,
//   quantises its rows. Both give the same bits. With `in` not a multiple of 32 a block would straddle two
//   taps, and such a convolution unfolds floats and quantises the rows.
// Either way a row's bits depend on nothing but its input: results are bitwise identical for any
// team size at a given ISA level.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/matmul_q8_rows.h"
#include "model/speaker/winograd_conv3x3.h"
#include "model/tensor_loader.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

// Where a kernel moves over a [T, F] map: its stride and zero padding along each axis, and its
// dilation along T (CAM++ dilates its time convolutions only).
struct ConvGeometry {
    int stride_t = 1, stride_f = 1;
    int pad_t = 0, pad_f = 0;
    int dilation_t = 1;
};

// A convolution weight's PyTorch shape [out, in, kf, kt], from its stored ne [kt, kf, in, out],
// a Conv1d's [kt, in, out] (kf = 1) or a 1x1 kernel's [in, out] matrix. Throws ModelError when
// the tensor is missing or has another rank.
struct KernelShape {
    int64_t out = 0, in = 0;
    int kf = 1, kt = 1;
};
KernelShape kernel_shape(const GgufReader& gguf, const TensorLoader& t, const std::string& name);

class Conv2dGemm {
public:
    Conv2dGemm() = default;
    // The weight tensor `weight` and the F32 bias `bias` ([out]; "" for none), for a map of `in`
    // channels. Throws ModelError when either is missing or does not fit, or the geometry has a
    // stride or dilation below 1 or a negative padding.
    static Conv2dGemm load(const GgufReader& gguf, const TensorLoader& t, const std::string& weight,
                           const std::string& bias, int64_t in, ConvGeometry geometry);
    // The 2-D ResNets' convolution: a square odd kernel, `stride` along both axes and padding
    // (kernel - 1) / 2 on every side. Throws ModelError for another kernel.
    static Conv2dGemm load_square(const GgufReader& gguf, const TensorLoader& t, const std::string& weight,
                                  const std::string& bias, int64_t in, int stride);

    int64_t in() const { return in_; }
    int64_t out() const { return out_; }
    int kernel_f() const { return kf_; }
    int kernel_t() const { return kt_; }
    const ConvGeometry& geometry() const { return g_; }
    // The output's length along T (of T input steps) and along F (of F input bins); 0 when no
    // position fits.
    int64_t out_t(int64_t T) const { return out_size(T, kt_, g_.stride_t, g_.pad_t, g_.dilation_t); }
    int64_t out_f(int64_t F) const { return out_size(F, kf_, g_.stride_f, g_.pad_f, 1); }

    // y [out_t(T), out_f(F), out] from x [T, F, in]; relu clamps y at 0. y must not overlap x.
    void forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, float* y, bool relu) const {
        forward(team, arena, x, T, F, in_, y, out_, relu);
    }
    // The same with x[(t * F + f) * ldx + c] and y[(t * Fo + f) * ldy + o] (ldx >= in, ldy >= out).
    void forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, int64_t ldx, float* y,
                 int64_t ldy, bool relu) const;
    // A residual block's end: y = max(conv(x) + residual, 0), residual shaped like y and not
    // overlapping it. The Winograd form adds it in its output transform, the others in a pass
    // after their product.
    void forward_add_relu(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, const float* residual,
                          float* y) const;

    // Whether it runs by Winograd (a 3x3, stride-1, padding-1 kernel of F32 weights, above), the
    // form that runs a band of a map's rows (forward_rows).
    bool winograd() const { return winograd_ != nullptr; }
    // Output rows [0, rows) of a band of a map, plus the residual (the band's rows; null for
    // none), clamped at 0 when relu: WinogradConv3x3::forward_rows (x's rows [t_begin, t_end) are
    // the map's; a band starting on a multiple of 4 rows gives the whole map's bits). Throws
    // std::logic_error unless winograd().
    void forward_rows(ThreadTeam& team, Arena& arena, const float* x, int64_t t_begin, int64_t t_end, int64_t rows,
                      int64_t F, const float* residual, float* y, bool relu) const;

private:
    static int64_t out_size(int64_t n, int kernel, int stride, int pad, int dilation) {
        const int64_t span = static_cast<int64_t>(dilation) * (kernel - 1) + 1;
        const int64_t padded = n + 2 * static_cast<int64_t>(pad);
        return padded < span ? 0 : (padded - span) / stride + 1;
    }
    // Whether the map is the product's input as it is (a 1x1 kernel moving one step at a time).
    bool pointwise_map(int64_t ldx) const;
    // Whether the kernel reads each input position as it is: 1x1, one step at a time, no padding.
    bool one_to_one() const;
    // The input position (t * F + f) that tap (i, j) of output position (to, fo) reads, or -1
    // where it falls in the zero padding.
    int64_t tap_source(int64_t to, int64_t fo, int i, int j, int64_t T, int64_t F) const;
    // Rows [first, first + rows) of the unfolded input (output position r is (t * Fo + f)) into
    // cols [rows, in * kf * kt], in the column order of the weight's form.
    void unfold(ThreadTeam& team, const float* x, int64_t T, int64_t F, int64_t ldx, int64_t first, int64_t rows,
                float* cols) const;
    // The same as the map rows each tap reads (tap_source: -1 in the padding, which the product
    // reads as zero blocks, what 32 zeros quantise to): sources[r * kf * kt + i * kt + j].
    void tap_sources(ThreadTeam& team, int64_t T, int64_t F, int64_t first, int64_t rows, int64_t* sources) const;
    // y [rows, out] (row stride ldy) = x [rows, in * kf * kt] W^T + bias, clamped at 0 when relu.
    void product(ThreadTeam& team, Arena& arena, const float* x, int64_t rows, float* y, int64_t ldy,
                 bool relu) const;
    // The unfolded route of forward() with the map quantised once (q8_map_).
    void forward_q8_map(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, int64_t ldx, float* y,
                        int64_t ldy, bool relu) const;

    // The weight [out, in * kf * kt] in one of four forms (the others empty):
    std::shared_ptr<const std::vector<float>> pointwise_;   // F32 in the pointwise kernel's panels,
    std::shared_ptr<const kernels::PackedWeights> weight_;  // other types packed for matmul,
    std::shared_ptr<const WinogradConv3x3> winograd_;       // the Winograd form,
    std::shared_ptr<const std::vector<float>> stem_;        // or the one-channel stem's [9, out]
    const kernels::KernelTable* kernels_ = nullptr;
    bool tap_major_ = false;  // the weight's columns in tap-major order, else PyTorch's
    bool q8_map_ = false;     // Q8_0 weights whose blocks are one tap's channels: quantise the map once
    const float* bias_ = nullptr;
    int64_t in_ = 0, out_ = 0;
    int kf_ = 1, kt_ = 1;
    ConvGeometry g_;
};

}  // namespace pk::speaker
