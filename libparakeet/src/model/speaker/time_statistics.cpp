#include "model/speaker/time_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/exp_poly.h"

namespace pk::speaker {

namespace {

// Channels walked together: each frame's run of them is whole cache lines, and their float and
// double sums stay in registers or L1.
constexpr int64_t kChannelBlock = 64;
// Frames summed in float before the run's sum joins the double total: float keeps the loops
// twice as wide, and runs this short keep a long clip's sums as accurate as double's.
constexpr int64_t kFramesPerRun = 32;
// Channels per task: at least one block.
constexpr int64_t kChannelGrain = kChannelBlock;

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

// total[c] += the sum over frames [0, T) of term(t, c) for c < n, in runs of kFramesPerRun.
template <class Term>
void sum_over_time(int64_t T, int64_t n, double* total, Term term) {
    float run[kChannelBlock];
    for (int64_t t0 = 0; t0 < T; t0 += kFramesPerRun) {
        std::fill(run, run + n, 0.0f);
        for (int64_t t = t0; t < std::min(T, t0 + kFramesPerRun); ++t)
            for (int64_t c = 0; c < n; ++c) run[c] += term(t, c);
        for (int64_t c = 0; c < n; ++c) total[c] += run[c];
    }
}

// column_stats of the channels [c0, c0 + n), n <= kChannelBlock.
void block_stats(const float* x, int64_t T, int64_t C, const float* w, int64_t c0, int64_t n, float* mean, float* std,
                 float var_floor) {
    const float* xb = x + c0;
    const float* wb = w == nullptr ? nullptr : w + c0;
    double sum[kChannelBlock] = {}, weight[kChannelBlock] = {}, square[kChannelBlock] = {};
    if (wb == nullptr) {
        sum_over_time(T, n, sum, [&](int64_t t, int64_t c) { return xb[t * C + c]; });
        std::fill(weight, weight + n, static_cast<double>(T));
    } else {
        sum_over_time(T, n, sum, [&](int64_t t, int64_t c) { return wb[t * C + c] * xb[t * C + c]; });
        sum_over_time(T, n, weight, [&](int64_t t, int64_t c) { return wb[t * C + c]; });
    }
    float m[kChannelBlock];
    for (int64_t c = 0; c < n; ++c) m[c] = mean[c0 + c] = static_cast<float>(sum[c] / weight[c]);
    if (std == nullptr) return;
    if (wb == nullptr)
        sum_over_time(T, n, square, [&](int64_t t, int64_t c) {
            const float d = xb[t * C + c] - m[c];
            return d * d;
        });
    else
        sum_over_time(T, n, square, [&](int64_t t, int64_t c) {
            const float d = xb[t * C + c] - m[c];
            return wb[t * C + c] * d * d;
        });
    for (int64_t c = 0; c < n; ++c)
        std[c0 + c] = std::sqrt(std::max(static_cast<float>(square[c] / weight[c]), var_floor));
}

}  // namespace

void column_stats(ThreadTeam& team, const float* x, int64_t T, int64_t C, const float* w, float* mean, float* std,
                  float var_floor) {
    parallel_for(team, C, kChannelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t c0 = begin; c0 < end; c0 += kChannelBlock)
            block_stats(x, T, C, w, c0, std::min(kChannelBlock, end - c0), mean, std, var_floor);
    });
}

void exp_over_time(ThreadTeam& team, float* a, int64_t T, int64_t C) {
    parallel_for(team, C, kChannelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t c0 = begin; c0 < end; c0 += kChannelBlock) {
            const int64_t n = std::min(kChannelBlock, end - c0);
            float peak[kChannelBlock];
            std::copy_n(a + c0, n, peak);
            for (int64_t t = 1; t < T; ++t) {
                const float* row = a + t * C + c0;
                for (int64_t c = 0; c < n; ++c) {
                    const float v = row[c];
                    peak[c] = std::max(peak[c], v);
                }
            }
            // Below -87 (e^-87, next to the peak's 1: nothing) 2^n would leave the normal range.
            // The clamp is a loop of its own: with exp's in one loop GCC does not vectorise it.
            for (int64_t t = 0; t < T; ++t) {
                float* row = a + t * C + c0;
                for (int64_t c = 0; c < n; ++c) row[c] = std::max(row[c] - peak[c], -87.0f);
                for (int64_t c = 0; c < n; ++c) row[c] = exp_from_minus_87(row[c]);
            }
        }
    });
}

}  // namespace pk::speaker
