// Pointwise (1x1) convolution over channels-last maps: y[p][o] = bias[o] + sum_i W[o][i] x[p][i]
// for every pixel p, i.e. a [P, Cin] x [Cin, Cout] matrix product with the weight packed once
// at load. Used by the subsampling stage (see conv_subsampling.h for the layout).
#pragma once

#include <cstdint>

#include "runtime/thread_team.h"

namespace pk::kernels {

struct KernelTable;

// Floats needed by the packed weight: Cout rounded up to a multiple of 16, times Cin.
int64_t pointwise_conv_packed_size(int64_t cin, int64_t cout);

// Packs the PyTorch weight [Cout, Cin, 1, 1] (read as [Cout, Cin]) into panels of 16 output
// channels: packed[(o / 16) * Cin * 16 + i * 16 + o % 16] = W[o][i], zero past Cout. Load time.
void pointwise_conv_pack_weight(const float* weight, int64_t cin, int64_t cout, float* packed);

// x is [P, Cin] (a [T, F, Cin] map has P = T * F), y is [P, Cout]; bias [Cout] may be null.
// With relu, y = max(y, 0). y must not overlap x. Pixel rows are split across the team and run
// by k's kernel (kernel_table.h).
void pointwise_conv(const KernelTable& k, ThreadTeam& team, const float* x, int64_t P, int64_t cin,
                    const float* packed_weight, int64_t cout, const float* bias, bool relu,
                    float* y);

}  // namespace pk::kernels
