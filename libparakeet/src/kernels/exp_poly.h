// The constants of the vectorised exp shared by every ISA level (ops_vec_avx2.h,
// ops_vec_avx512.h): x = n*ln2 + r with ln2 split in two parts (Cody-Waite), then a degree-7
// polynomial for exp(r). One set, so the levels cannot drift apart. Plain constexpr floats:
// safe to include from ISA-specific files (no code, nothing for the linker to pick).
#pragma once

namespace pk::kernels::exp_poly {

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
// exp(r) ≈ 1 + r + r²·(c5 + r·(c4 + r·(c3 + r·(c2 + r·(c1 + r·c0))))).
constexpr float kC0 = 1.9875691500e-4f;
constexpr float kC1 = 1.3981999507e-3f;
constexpr float kC2 = 8.3334519073e-3f;
constexpr float kC3 = 4.1665795894e-2f;
constexpr float kC4 = 1.6666665459e-1f;
constexpr float kC5 = 5.0000001201e-1f;

}  // namespace pk::kernels::exp_poly
