#include "model/speaker/time_statistics.h"

#include <algorithm>
#include <cmath>

#include "model/speaker/vector_math.h"

namespace pk::speaker {

namespace {

// Channels walked together: each frame's run of them is whole cache lines, and their float and
// double sums stay in registers or L1.
constexpr int64_t kChannelBlock = 64;
// Frames summed in float before the run's sum joins the double total: float keeps the loops
// twice as wide, and runs this short keep a long clip's sums close to double's (a 60 s clip's
// statistics within 2e-6 relative, test_speaker_time_statistics).
constexpr int64_t kFramesPerRun = 32;
// Rows ahead that a pass over a block asks the cache for: the block's rows are C floats apart,
// mostly on another page each, where the hardware prefetchers do not follow.
constexpr int64_t kPrefetchRows = 8;

// Asks for the cache lines of row t + kPrefetchRows of a block of n channels (row stride C), if
// there is one.
inline void prefetch_row(const float* block, int64_t t, int64_t T, int64_t C, int64_t n) {
    if (t + kPrefetchRows >= T) return;
    const float* row = block + (t + kPrefetchRows) * C;
    for (int64_t c = 0; c < n; c += 16) __builtin_prefetch(row + c, 0, 3);
}

// total[c] += the sum over frames [0, T) of term(t, c) for c < n, in runs of kFramesPerRun,
// prefetching the rows of `first_read` (row stride C), the block that term reads from memory
// (null when it is in the cache).
template <class Term>
void sum_over_time(int64_t T, int64_t C, int64_t n, double* total, const float* first_read, Term term) {
    float run[kChannelBlock];
    for (int64_t t0 = 0; t0 < T; t0 += kFramesPerRun) {
        std::fill(run, run + n, 0.0f);
        for (int64_t t = t0; t < std::min(T, t0 + kFramesPerRun); ++t) {
            if (first_read != nullptr) prefetch_row(first_read, t, T, C, n);
            for (int64_t c = 0; c < n; ++c) run[c] += term(t, c);
        }
        for (int64_t c = 0; c < n; ++c) total[c] += run[c];
    }
}

// std[c] = sqrt(max(variance, var_floor)) for c < n of the block xb (row stride C) about m[c],
// under the weights wb (or equal weights when null) totalling weight[c].
void block_std(const float* xb, const float* wb, int64_t T, int64_t C, int64_t n, const float* m, const double* weight,
               float var_floor, float* std) {
    double square[kChannelBlock] = {};
    if (wb == nullptr)
        sum_over_time(T, C, n, square, nullptr, [&](int64_t t, int64_t c) {
            const float d = xb[t * C + c] - m[c];
            return d * d;
        });
    else
        sum_over_time(T, C, n, square, nullptr, [&](int64_t t, int64_t c) {
            const float d = xb[t * C + c] - m[c];
            return wb[t * C + c] * d * d;
        });
    for (int64_t c = 0; c < n; ++c) std[c] = std::sqrt(std::max(static_cast<float>(square[c] / weight[c]), var_floor));
}

// column_stats of the channels [c0, c0 + n), n <= kChannelBlock.
void block_stats(const float* x, int64_t T, int64_t C, int64_t c0, int64_t n, float* mean, float* std,
                 float var_floor) {
    double sum[kChannelBlock] = {}, weight[kChannelBlock];
    sum_over_time(T, C, n, sum, x + c0, [&](int64_t t, int64_t c) { return x[t * C + c0 + c]; });
    std::fill(weight, weight + n, static_cast<double>(T));
    float m[kChannelBlock];
    for (int64_t c = 0; c < n; ++c) m[c] = mean[c0 + c] = static_cast<float>(sum[c] / weight[c]);
    if (std != nullptr) block_std(x + c0, nullptr, T, C, n, m, weight, var_floor, std + c0);
}

// softmax_stats of the channels [c0, c0 + n), n <= kChannelBlock: the peak, then one pass that
// takes the exponentials and sums them and their products with x, then the deviations'.
void block_softmax_stats(const float* x, float* a, int64_t T, int64_t C, int64_t c0, int64_t n, float* mean,
                         float* std, float var_floor) {
    float* ab = a + c0;
    const float* xb = x + c0;
    float peak[kChannelBlock];
    std::copy_n(ab, n, peak);
    for (int64_t t = 1; t < T; ++t) {
        prefetch_row(ab, t, T, C, n);
        const float* row = ab + t * C;
        for (int64_t c = 0; c < n; ++c) {
            const float v = row[c];
            peak[c] = std::max(peak[c], v);
        }
    }
    double weight[kChannelBlock] = {}, sum[kChannelBlock] = {};
    float run_weight[kChannelBlock], run_sum[kChannelBlock];
    for (int64_t t0 = 0; t0 < T; t0 += kFramesPerRun) {
        std::fill(run_weight, run_weight + n, 0.0f);
        std::fill(run_sum, run_sum + n, 0.0f);
        for (int64_t t = t0; t < std::min(T, t0 + kFramesPerRun); ++t) {
            prefetch_row(xb, t, T, C, n);
            float* row = ab + t * C;
            const float* xr = xb + t * C;
            // Below -87 (e^-87 beside the peak's 1: nothing) 2^n would leave the normal range.
            // The clamp is a loop of its own: in exp's loop it keeps GCC from vectorising it.
            for (int64_t c = 0; c < n; ++c) row[c] = std::max(row[c] - peak[c], -87.0f);
            for (int64_t c = 0; c < n; ++c) {
                const float e = exp_from_minus_87(row[c]);
                row[c] = e;
                run_weight[c] += e;
                run_sum[c] += e * xr[c];
            }
        }
        for (int64_t c = 0; c < n; ++c) {
            weight[c] += run_weight[c];
            sum[c] += run_sum[c];
        }
    }
    float m[kChannelBlock];
    for (int64_t c = 0; c < n; ++c) m[c] = mean[c0 + c] = static_cast<float>(sum[c] / weight[c]);
    block_std(xb, ab, T, C, n, m, weight, var_floor, std + c0);
}

// Calls f(c0, n) for the blocks of at most kChannelBlock channels, whole blocks split over the
// team: a split inside a block would have two threads write the same cache lines of each row of a
// (softmax_stats writes it in place).
template <class F>
void each_channel_block(ThreadTeam& team, int64_t C, F&& f) {
    const int64_t blocks = (C + kChannelBlock - 1) / kChannelBlock;
    parallel_for(team, blocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) f(b * kChannelBlock, std::min(kChannelBlock, C - b * kChannelBlock));
    });
}

}  // namespace

void column_stats(ThreadTeam& team, const float* x, int64_t T, int64_t C, float* mean, float* std, float var_floor) {
    each_channel_block(team, C, [&](int64_t c0, int64_t n) { block_stats(x, T, C, c0, n, mean, std, var_floor); });
}

void softmax_stats(ThreadTeam& team, const float* x, float* a, int64_t T, int64_t C, float* mean, float* std,
                   float var_floor) {
    each_channel_block(team, C,
                       [&](int64_t c0, int64_t n) { block_softmax_stats(x, a, T, C, c0, n, mean, std, var_floor); });
}

}  // namespace pk::speaker
