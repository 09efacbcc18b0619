// A 3x3, stride-1, zero-padding-1 convolution with bias by Winograd's F(4x4, 3x3) algorithm
// (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016), on the
// channels-last maps of conv2d_gemm.h: each 4x4 block of outputs comes from its 6x6 input tile
// as A^T [(G g G^T) . (B^T d B)] A, 36 products where the direct convolution takes 144 (F(2x2,
// 3x3) took 16 for 36). The 36 element-wise products summed over input channels are 36 matrix
// products [tiles, in] x [in, out] on the level's pointwise-conv kernel (conv_pointwise.h: it
// reads the transformed tiles as they are, where the matmul's GEMM would copy them into its
// panels first), the weights transformed (G g G^T, in double) and packed once at load. The input
// and output transforms are the level's too (kernels/conv_winograd_f4.h).
//
// In f32 the results differ from the direct convolution's by rounding only (the transforms
// scale by at most 8 and 5 and sum a few values: about 1e-6 of the outputs' size).
//
// A quantised model runs the 36 products on Q8_0 instead (Products::Q8_0): the transformed
// weights quantised at load, each transformed tile's channels per block of 32 as matmul()
// quantises activations, the products matmul()'s int8 ones. That is what got the q8_0 files'
// 2-D networks past their f32 Winograd products (ResNet34 q8_0 88.9 -> 64.8 ms per 10 s on one
// avx512 core, -27 %; int8 direct products had made them slower). The price is accuracy: the
// output transform (weights up to 64) sums the int8 rounding of the 36 products, so on uniform
// random maps and weights a convolution errs 6-7 % RMS (test_speaker_winograd), and ResNet34's
// embedding moved from cosine 0.99996 to its f32 one to 0.99987 (still nearer PyTorch's than
// onnxruntime int8's).
// It runs only where int8 products outrun f32 ones four to one (int8_pays(level): the levels
// with int8 dot-product tiles); on avx2 it measured no faster, on the scalar level slower.
//
// Either way the results are bitwise identical for any team size: each band of tiles runs all
// three stages on the thread that claimed it, and the products compute each row on its own.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/conv_winograd_f4.h"
#include "kernels/kernel_table.h"
#include "kernels/matmul.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

class WinogradConv3x3 {
public:
    // The products' type: F32, or Q8_0 (transformed weights and tiles quantised per block of 32
    // input channels).
    enum class Products { F32, Q8_0 };

    // Whether Q8_0 products are the faster at `level` (above); they also need `in` to be a
    // multiple of 32.
    static bool int8_pays(IsaLevel level);

    WinogradConv3x3() = default;
    // From the F32 PyTorch weight [out, in, 3, 3] (kernel rows along the map's F axis, columns
    // along T), transformed and packed for `level`. Throws std::invalid_argument for Q8_0
    // products with `in` not a multiple of 32.
    WinogradConv3x3(const float* weight, int64_t out, int64_t in, IsaLevel level, Products products = Products::F32);

    // y [T, F, out] = conv(x [T, F, in]) + bias (none when null) + residual [T, F, out] (none
    // when null: a residual block's shortcut, added in the output transform rather than in a
    // pass of its own over the maps), clamped at 0 when relu. y must not overlap x or residual.
    void forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, const float* bias,
                 const float* residual, float* y, bool relu) const {
        forward_rows(team, arena, x, 0, T, T, F, bias, residual, y, relu);
    }
    // The same for output rows [0, rows) of a band of a map: the input's rows [t_begin, t_end)
    // relative to x (t_begin <= 0) are the map's, zero padding elsewhere; y and residual hold the
    // band's rows. The tiles start at x's row 0, so a band that starts at a multiple of 4 rows of
    // its map gives the bits of the whole map's forward().
    void forward_rows(ThreadTeam& team, Arena& arena, const float* x, int64_t t_begin, int64_t t_end, int64_t rows,
                      int64_t F, const float* bias, const float* residual, float* y, bool relu) const;

private:
    // Where a band of `tiles` tiles keeps its transformed values of `channels` channels:
    // position-major for the f32 products (the pointwise kernel reads and writes whole rows),
    // tile-major for the Q8_0 ones (then the transforms read and write each tile's 36 rows as
    // one run: position-major, their stores to 36 places 4 to 36 KiB apart took ResNet34's
    // input transform 14 % of the CPU).
    kernels::WinogradF4Layout layout(int64_t tiles, int64_t channels) const;
    // The products of one band of tiles on the calling thread: m (36 x tiles x out_) from the
    // transformed tiles v (36 x tiles x in_), scratch the thread's (scratch_bytes(tiles)).
    void products(const float* v, int64_t tiles, void* scratch, float* m) const;
    size_t scratch_bytes(int64_t tiles) const;

    // F32 products: per tile position, [in, out] in the pointwise kernel's panels.
    std::vector<float> u_;
    int64_t u_stride_ = 0;  // floats per tile position
    // Q8_0 products: per tile position, [out, in] packed for matmul().
    std::vector<kernels::PackedWeights> uq_;
    const kernels::KernelTable* kernels_ = nullptr;
    int64_t in_ = 0, out_ = 0;
};

}  // namespace pk::speaker
