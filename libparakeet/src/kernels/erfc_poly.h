// The constants of the AVX2 GELU's Gaussian tail Φ(-z·√2) = erfc(z) / 2 (ops_vec_avx2.h; the
// AVX-512 one uses gelu_tail_poly.h): with t = 1 / (1 + z/2),
//   erfc(z) ≈ t · exp(-z² + c0 + t·(c1 + t·(c2 + ... + t·c9)))   for z >= 0,
// the Chebyshev fit of Numerical Recipes' erfcc (relative error below 1.2e-7 for every z >= 0).
// Plain constexpr floats: safe to include from ISA-specific files.
#pragma once

namespace pk::kernels::erfc_poly {

constexpr float kC0 = -1.26551223f;
constexpr float kC1 = 1.00002368f;
constexpr float kC2 = 0.37409196f;
constexpr float kC3 = 0.09678418f;
constexpr float kC4 = -0.18628806f;
constexpr float kC5 = 0.27886807f;
constexpr float kC6 = -1.13520398f;
constexpr float kC7 = 1.48851587f;
constexpr float kC8 = -0.82215223f;
constexpr float kC9 = 0.17087277f;
constexpr float kInvSqrt2 = 0.70710678118654752f;

}  // namespace pk::kernels::erfc_poly
