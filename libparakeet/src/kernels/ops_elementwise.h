// Elementwise arithmetic on float tensors: sums, scaling and row bias. These are bound by
// memory bandwidth, so they have only a portable implementation (the compiler vectorises it).
#pragma once

#include <cstdint>

#include "runtime/thread_team.h"

namespace pk::kernels {

// In every function below, n counts elements (rows * cols for a [rows, cols] tensor) and the
// output may be any one of the inputs (in place); otherwise outputs and inputs must not
// overlap.

// y[i] = a[i] + b[i].
void add(ThreadTeam& team, const float* a, const float* b, int64_t n, float* y);

// y[i] = a[i] + alpha * b[i] (the macaron half-step residual x + 0.5 * ffn(x)).
void add_scaled(ThreadTeam& team, const float* a, const float* b, float alpha, int64_t n,
                float* y);

// y[i] = alpha * x[i].
void scale(ThreadTeam& team, const float* x, float alpha, int64_t n, float* y);

// y[r][c] = x[r][c] + bias[c] for x, y [rows, cols] and bias [cols].
void add_bias(ThreadTeam& team, const float* x, int64_t rows, int64_t cols, const float* bias,
              float* y);

}  // namespace pk::kernels
