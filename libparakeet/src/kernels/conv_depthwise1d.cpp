#include "kernels/conv_depthwise1d.h"

#include <algorithm>

#include "kernels/kernel_table.h"
#include "kernels/ops_grain.h"

namespace pk::kernels {
namespace {

// Portable path: per frame, start from the bias and add one tap at a time across all
// channels (the channel loop vectorises). Taps that fall in the zero padding are skipped.
void depthwise_conv1d_rows_scalar(const float* x, int64_t T, int64_t C, const float* w,
                                  int64_t kernel, const float* bias, int64_t t_begin,
                                  int64_t t_end, float* y) {
    const int64_t pad = (kernel - 1) / 2;
    for (int64_t t = t_begin; t < t_end; ++t) {
        float* __restrict yr = y + t * C;
        for (int64_t c = 0; c < C; ++c) yr[c] = bias ? bias[c] : 0.0f;
        for (int64_t j = 0; j < kernel; ++j) {
            const int64_t s = t + j - pad;
            if (s < 0 || s >= T) continue;
            const float* __restrict xr = x + s * C;
            const float* __restrict wj = w + j * C;
            for (int64_t c = 0; c < C; ++c) yr[c] += wj[c] * xr[c];
        }
    }
}

}  // namespace

void add_conv_depthwise1d_scalar(KernelTable& t) {
    t.conv.depthwise_conv1d_rows = depthwise_conv1d_rows_scalar;
}

void depthwise_conv1d(const KernelTable& k, ThreadTeam& team, const float* x, int64_t T, int64_t C,
                      const float* packed_weight, int64_t kernel, const float* bias, float* y) {
    depthwise_conv1d_stacked(k, team, x, &T, 1, C, packed_weight, kernel, bias, y);
}

void depthwise_conv1d_stacked(const KernelTable& k, ThreadTeam& team, const float* x, const int64_t* lengths,
                              int64_t n, int64_t C, const float* packed_weight, int64_t kernel, const float* bias,
                              float* y) {
    if (C <= 0) return;
    int64_t total = 0;
    for (int64_t s = 0; s < n; ++s) total += lengths[s];
    auto* fn = k.conv.depthwise_conv1d_rows;
    parallel_for(team, total, grain_for(kernel * C), [&](int64_t begin, int64_t end) {
        // The part of [begin, end) in each sequence, run on that sequence alone.
        for (int64_t s = 0, first = 0; s < n && first < end; first += lengths[s++]) {
            const int64_t T = lengths[s], from = std::max(begin, first), to = std::min(end, first + T);
            if (from < to) fn(x + first * C, T, C, packed_weight, kernel, bias, from - first, to - first, y + first * C);
        }
    });
}

}  // namespace pk::kernels
