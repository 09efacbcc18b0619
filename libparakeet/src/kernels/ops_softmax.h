// Softmax and log-softmax over the last dimension, numerically stable (the row maximum is
// subtracted before exponentiating).
#pragma once

#include <cstdint>

#include "runtime/thread_team.h"

namespace pk::kernels {

struct KernelTable;

// y[r][c] = exp(x[r][c] - m_r) / sum_c' exp(x[r][c'] - m_r), m_r = max_c x[r][c].
// x and y are [rows, cols]; y may be x (in place), otherwise they must not overlap.
// Entries of -inf give 0 (attention masks can use them).
// Rows are split over the team and run by k's kernels (kernel_table.h).
void softmax(const KernelTable& k, ThreadTeam& team, const float* x, int64_t rows, int64_t cols,
             float* y);

// y[r][c] = x[r][c] - m_r - log(sum_c' exp(x[r][c'] - m_r)): log-probabilities for the
// decoders. Same layout and aliasing rules as softmax.
void log_softmax(const KernelTable& k, ThreadTeam& team, const float* x, int64_t rows,
                 int64_t cols, float* y);

}  // namespace pk::kernels
