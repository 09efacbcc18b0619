// Layer normalisation over the last dimension (PyTorch nn.LayerNorm with weight and bias).
#pragma once

#include <cstdint>

#include "runtime/thread_team.h"

namespace pk::kernels {

struct KernelTable;

// For each row r of x [rows, cols]:
//   y[r][c] = (x[r][c] - mean_r) / sqrt(var_r + eps) * weight[c] + bias[c]
// with the biased variance (divided by cols), as PyTorch computes it; callers pass
// eps = 1e-5 for the encoder's LayerNorms. y may be x (in place); otherwise the two must not
// overlap. Rows are split across the team; each row is normalised by one thread, with k's
// kernel (kernel_table.h).
void layer_norm(const KernelTable& k, ThreadTeam& team, const float* x, int64_t rows, int64_t cols,
                const float* weight, const float* bias, float eps, float* y);

}  // namespace pk::kernels
