// Activations: SiLU (Swish), sigmoid, GELU, ReLU and GLU.
#pragma once

#include <cstdint>

#include "runtime/thread_team.h"

namespace pk::kernels {

struct KernelTable;

// y[i] = x[i] * sigmoid(x[i]) for i in [0, n) (n = rows * cols for a [rows, cols] tensor).
// y may be x; otherwise they must not overlap. Runs k's kernels (kernel_table.h), as glu does.
void silu(const KernelTable& k, ThreadTeam& team, const float* x, int64_t n, float* y);

// y[i] = 1 / (1 + exp(-x[i])) for i in [0, n): the speaker heads' output. y may be x;
// otherwise they must not overlap. Runs k's kernels: the portable one calls std::exp, the x86
// ones the vector exp of SiLU (exp_poly.h), within a few ulps of it.
void sigmoid(const KernelTable& k, ThreadTeam& team, const float* x, int64_t n, float* y);

// y[i] = x[i] * Φ(x[i]) = x[i] / 2 * (1 + erf(x[i] / √2)), PyTorch's exact GELU (nn.GELU()'s
// default; CED's MLP). y may be x; otherwise they must not overlap. The portable version calls
// std::erf; the x86 ones compute Φ's tail, free of 1 + erf's cancellation for x < 0: avx2 from a
// Chebyshev fit of erfc (erfc_poly.h), avx512 from 16 short polynomials (gelu_tail_poly.h), both
// within 3e-7 of the exact GELU.
void gelu_erf(const KernelTable& k, ThreadTeam& team, const float* x, int64_t n, float* y);

// y[i] = max(x[i], 0) for i in [0, n). y may be x; otherwise they must not overlap.
void relu(ThreadTeam& team, const float* x, int64_t n, float* y);

// Gated linear unit over the channel dimension, PyTorch nn.functional.glu(dim=channels):
// x is [rows, 2 * channels], y is [rows, channels] and
//   y[r][c] = x[r][c] * sigmoid(x[r][channels + c]).
// y must not overlap x: threads write output rows while others still read input rows.
void glu(const KernelTable& k, ThreadTeam& team, const float* x, int64_t rows, int64_t channels,
         float* y);

}  // namespace pk::kernels
