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
// The results differ from the direct convolution's by rounding only (the transforms scale by
// at most 8 and 5 and sum a few values: about 1e-6 of the outputs' size); they are bitwise
// identical for any team size: each thread runs all three stages on its own run of tiles, and
// the pointwise kernel computes each row on its own.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernel_table.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

class WinogradConv3x3 {
public:
    WinogradConv3x3() = default;
    // From the F32 PyTorch weight [out, in, 3, 3] (kernel rows along the map's F axis, columns
    // along T), packed for `level`.
    WinogradConv3x3(const float* weight, int64_t out, int64_t in, IsaLevel level);

    // y [T, F, out] = conv(x [T, F, in]) + bias (none when null), clamped at 0 when relu. y must
    // not overlap x.
    void forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, const float* bias,
                 float* y, bool relu) const;

private:
    std::vector<float> u_;  // per tile position, [in, out] in the pointwise kernel's panels
    int64_t u_stride_ = 0;  // floats per tile position
    const kernels::KernelTable* kernels_ = nullptr;
    int64_t in_ = 0, out_ = 0;
};

}  // namespace pk::speaker
