#include "kernels/conv_subsampling.h"

#include <cstring>

#include "kernels/kernel_table.h"
#include "kernels/ops_grain.h"

namespace pk::kernels {
namespace {

// Portable paths: per output pixel, start from the bias and add one in-bounds tap at a time
// across all channels (the channel loop vectorises); taps in the zero padding are skipped.

void conv2d_3x3_single_channel_rows_scalar(const float* x, int64_t T, int64_t F, int stride, const float* w,
                                           const float* bias, int64_t C, bool relu, int64_t t_begin,
                                           int64_t t_end, float* y) {
    const int64_t F1 = conv3x3_output_size(F, stride);
    for (int64_t t = t_begin; t < t_end; ++t) {
        for (int64_t f = 0; f < F1; ++f) {
            float* __restrict yp = y + (t * F1 + f) * C;
            for (int64_t c = 0; c < C; ++c) yp[c] = bias[c];
            for (int64_t i = 0; i < 3; ++i) {
                const int64_t s = stride * t + i - 1;
                if (s < 0 || s >= T) continue;
                for (int64_t j = 0; j < 3; ++j) {
                    const int64_t u = stride * f + j - 1;
                    if (u < 0 || u >= F) continue;
                    const float xv = x[s * F + u];
                    const float* __restrict wt = w + (3 * i + j) * C;
                    for (int64_t c = 0; c < C; ++c) yp[c] += xv * wt[c];
                }
            }
            if (relu)
                for (int64_t c = 0; c < C; ++c) yp[c] = yp[c] < 0.0f ? 0.0f : yp[c];
        }
    }
}

void depthwise_conv2d_3x3_s2_rows_scalar(const float* x, int64_t T, int64_t F, int64_t C,
                                         const float* w, const float* bias, int64_t t_begin,
                                         int64_t t_end, float* y) {
    const int64_t F1 = conv3x3_s2_output_size(F);
    for (int64_t t = t_begin; t < t_end; ++t) {
        for (int64_t f = 0; f < F1; ++f) {
            float* __restrict yp = y + (t * F1 + f) * C;
            for (int64_t c = 0; c < C; ++c) yp[c] = bias[c];
            for (int64_t i = 0; i < 3; ++i) {
                const int64_t s = 2 * t + i - 1;
                if (s < 0 || s >= T) continue;
                for (int64_t j = 0; j < 3; ++j) {
                    const int64_t u = 2 * f + j - 1;
                    if (u < 0 || u >= F) continue;
                    const float* __restrict xp = x + (s * F + u) * C;
                    const float* __restrict wt = w + (3 * i + j) * C;
                    for (int64_t c = 0; c < C; ++c) yp[c] += xp[c] * wt[c];
                }
            }
        }
    }
}

}  // namespace

void add_conv_subsampling_scalar(KernelTable& t) {
    t.conv.conv2d_3x3_single_channel_rows = conv2d_3x3_single_channel_rows_scalar;
    t.conv.depthwise_conv2d_3x3_s2_rows = depthwise_conv2d_3x3_s2_rows_scalar;
}

void conv2d_3x3_single_channel(const KernelTable& k, ThreadTeam& team, const float* x, int64_t T, int64_t F,
                               int stride, const float* packed_weight, const float* bias, int64_t C, bool relu,
                               float* y) {
    const int64_t T1 = conv3x3_output_size(T, stride);
    const int64_t F1 = conv3x3_output_size(F, stride);
    if (F1 <= 0 || C <= 0) return;
    auto* fn = k.conv.conv2d_3x3_single_channel_rows;
    parallel_for(team, T1, grain_for(9 * F1 * C), [&](int64_t begin, int64_t end) {
        fn(x, T, F, stride, packed_weight, bias, C, relu, begin, end, y);
    });
}

void depthwise_conv2d_3x3_s2(const KernelTable& k, ThreadTeam& team, const float* x, int64_t T,
                             int64_t F, int64_t C, const float* packed_weight, const float* bias,
                             float* y) {
    const int64_t T1 = conv3x3_s2_output_size(T);
    const int64_t F1 = conv3x3_s2_output_size(F);
    if (F1 <= 0 || C <= 0) return;
    auto* fn = k.conv.depthwise_conv2d_3x3_s2_rows;
    parallel_for(team, T1, grain_for(9 * F1 * C), [&](int64_t begin, int64_t end) {
        fn(x, T, F, C, packed_weight, bias, begin, end, y);
    });
}

void zero_time_steps(float* x, int64_t T, int64_t step_elems, int64_t valid) {
    if (valid < 0) valid = 0;
    if (valid >= T || step_elems <= 0) return;
    std::memset(x + valid * step_elems, 0,
                static_cast<size_t>((T - valid) * step_elems) * sizeof(float));
}

void flatten_channel_major(ThreadTeam& team, const float* x, int64_t T, int64_t F, int64_t C,
                           float* y) {
    if (F <= 0 || C <= 0) return;
    parallel_for(team, T, grain_for(F * C), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const float* xt = x + t * F * C;  // [F, C]
            float* yt = y + t * C * F;        // [C, F]
            for (int64_t f = 0; f < F; ++f)
                for (int64_t c = 0; c < C; ++c) yt[c * F + f] = xt[f * C + c];
        }
    });
}

}  // namespace pk::kernels
