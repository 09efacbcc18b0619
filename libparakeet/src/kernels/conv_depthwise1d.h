// Depthwise 1-D convolution over time with 'same' zero padding: the conformer conv module's
// depthwise_conv (kernel 9, BatchNorm folded in at load).
#pragma once

#include <cstdint>

#include "runtime/thread_team.h"

namespace pk::kernels {

struct KernelTable;

// x and y are time-major [T, C] (row t holds the C channels of frame t). packed_weight is
// [kernel, C] from pack_depthwise_weight() of the PyTorch [C, 1, kernel] weight; kernel is
// odd and the padding is (kernel - 1) / 2 on both sides, so
//   y[t][c] = bias[c] + sum_j packed_weight[j][c] * x[t + j - (kernel - 1) / 2][c]
// with x = 0 outside [0, T). bias [C] may be null (no bias). y must not overlap x. Time rows
// are split across the team and run by k's kernel (kernel_table.h).
void depthwise_conv1d(const KernelTable& k, ThreadTeam& team, const float* x, int64_t T, int64_t C,
                      const float* packed_weight, int64_t kernel, const float* bias, float* y);

// depthwise_conv1d of n independent sequences stacked back to back in x and y (sequence s:
// lengths[s] rows, each padded with zeros at its own ends) in one dispatch, rather than one
// per sequence; each row is computed as depthwise_conv1d computes it alone.
void depthwise_conv1d_stacked(const KernelTable& k, ThreadTeam& team, const float* x, const int64_t* lengths,
                              int64_t n, int64_t C, const float* packed_weight, int64_t kernel, const float* bias,
                              float* y);

}  // namespace pk::kernels
