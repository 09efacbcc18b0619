// Elementwise maths for the speaker encoders' own passes, in plain float arithmetic that the
// compiler vectorises (the model code is built for the baseline ISA, one build for every level,
// so every level gives the same bits), where std::exp and std::tanh are a call per value.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/exp_poly.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

// e^x for -87 <= x <= 0 within a few ulp: x = n ln2 + r with n = round(x log2e),
// kernels/exp_poly.h's polynomial for e^r, 2^n from the exponent bits. No call and no branch, so
// the loops around it vectorise (std::exp is a call per value). n comes from the bits of the
// rounding sum (the integer is its low mantissa bits), not a float-to-int conversion.
inline float exp_from_minus_87(float x) {
    namespace ep = kernels::exp_poly;
    constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer (to nearest)
    constexpr int32_t kRoundBits = 0x4B400000;  // its bits
    const float shifted = x * ep::kLog2e + kRound;
    const float n = shifted - kRound;
    const float r = (x - n * ep::kLn2Hi) - n * ep::kLn2Lo;
    const float p = 1.0f + r + r * r * (ep::kC5 + r * (ep::kC4 + r * (ep::kC3 + r * (ep::kC2 + r * (ep::kC1 + r * ep::kC0)))));
    int32_t bits;
    std::memcpy(&bits, &shifted, sizeof(bits));
    bits = (bits - kRoundBits + 127) << 23;  // n >= -126: a normal 2^n
    float scale;
    std::memcpy(&scale, &bits, sizeof(scale));
    return p * scale;
}

// x[i] = tanh(x[i]) for i < n, within a few ulp of 1 and about 1e-7 absolute near 0:
// sign(x) (1 - e) / (1 + e) with e = e^(-2|x|).
void tanh_in_place(float* x, int64_t n);

// The time statistics of each column j of x [T, cols] (row stride cols): mean[j] = sum / T and
// dev[j] = sum of (x[t][j] - mean[j])^2, in double, each sum taken over t in order. A row at a
// time, so the columns are independent chains that vectorise, where a column at a time was one
// chain of dependent additions (2 % of an ERes2Net embedding). The columns split over the team;
// no bit depends on the split.
void column_moments(ThreadTeam& team, const float* x, int64_t T, int64_t cols, double* mean, double* dev);

}  // namespace pk::speaker
