// The Winograd F(4x4, 3x3) transforms (conv_winograd_f4.h) as plain loops over the channels,
// included by conv_winograd_f4.cpp and its per-level files, each of which compiles them with its
// level's vector width: the loops run over contiguous channels and vectorise as they are. Only
// `static inline` code here (kernel_table.h: headers of ISA files).
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/conv_winograd_f4.h"

namespace pk::kernels::winograd_f4 {

// B^T applied across six rows of n values (common terms shared: o1, o2 = p +- q, o3, o4 = r +- s).
static inline void input_rows(const float* __restrict d0, const float* __restrict d1, const float* __restrict d2,
                              const float* __restrict d3, const float* __restrict d4, const float* __restrict d5,
                              int64_t n, float* __restrict o0, float* __restrict o1, float* __restrict o2,
                              float* __restrict o3, float* __restrict o4, float* __restrict o5) {
    for (int64_t c = 0; c < n; ++c) {
        const float p = d4[c] - 4.0f * d2[c], q = d3[c] - 4.0f * d1[c];
        const float r = d4[c] - d2[c], s = 2.0f * (d3[c] - d1[c]);
        o0[c] = 4.0f * d0[c] - 5.0f * d2[c] + d4[c];
        o1[c] = p + q;
        o2[c] = p - q;
        o3[c] = r + s;
        o4[c] = r - s;
        o5[c] = 4.0f * d1[c] - 5.0f * d3[c] + d5[c];
    }
}

// A^T applied across six rows of n values.
static inline void output_rows(const float* __restrict m0, const float* __restrict m1, const float* __restrict m2,
                               const float* __restrict m3, const float* __restrict m4, const float* __restrict m5,
                               int64_t n, float* __restrict o0, float* __restrict o1, float* __restrict o2,
                               float* __restrict o3) {
    for (int64_t c = 0; c < n; ++c) {
        const float a = m1[c] + m2[c], b = m1[c] - m2[c], e = m3[c] + m4[c], g = m3[c] - m4[c];
        o0[c] = m0[c] + a + e;
        o1[c] = b + 2.0f * g;
        o2[c] = a + 4.0f * e;
        o3[c] = b + 8.0f * g + m5[c];
    }
}

static inline void finish(float* __restrict y, const float* __restrict bias, const float* __restrict residual,
                          int64_t n, bool relu) {
    if (bias != nullptr)
        for (int64_t c = 0; c < n; ++c) y[c] += bias[c];
    if (residual != nullptr)
        for (int64_t c = 0; c < n; ++c) y[c] += residual[c];
    if (relu)
        for (int64_t c = 0; c < n; ++c) y[c] = std::max(y[c], 0.0f);
}

// work: [6][6][C] rows of B^T d, then C zeros (the input outside the map).
static inline void input(const float* x, int64_t t_begin, int64_t t_end, int64_t F, int64_t C, int64_t first,
                         int64_t tiles, WinogradF4Layout layout, float* work, float* v) {
    const int64_t tiles_f = (F + 3) / 4;
    float* r = work;
    float* zeros = work + 36 * C;
    std::fill(zeros, zeros + C, 0.0f);
    for (int64_t i = 0; i < tiles; ++i) {
        const int64_t tile = first + i;
        const int64_t t0 = 4 * (tile / tiles_f) - 1, f0 = 4 * (tile % tiles_f) - 1;
        const float* d[36];
        for (int a = 0; a < 6; ++a)
            for (int b = 0; b < 6; ++b) {
                const int64_t f = f0 + a, t = t0 + b;
                d[a * 6 + b] = f < 0 || f >= F || t < t_begin || t >= t_end ? zeros : x + (t * F + f) * C;
            }
        for (int b = 0; b < 6; ++b) {  // B^T d, [a][b][C]
            float* o = r + b * C;
            input_rows(d[b], d[6 + b], d[12 + b], d[18 + b], d[24 + b], d[30 + b], C, o, o + 6 * C, o + 12 * C,
                       o + 18 * C, o + 24 * C, o + 30 * C);
        }
        for (int a = 0; a < 6; ++a) {  // (B^T d) B
            const float* ra = r + a * 6 * C;
            float* o[6];
            for (int b = 0; b < 6; ++b) o[b] = v + (a * 6 + b) * layout.position + i * layout.tile;
            input_rows(ra, ra + C, ra + 2 * C, ra + 3 * C, ra + 4 * C, ra + 5 * C, C, o[0], o[1], o[2], o[3], o[4],
                       o[5]);
        }
    }
}

// work: [4][6][C] rows of A^T M, then 4 rows of C floats for the outputs past the map's end.
static inline void output(const float* m, WinogradF4Layout layout, int64_t T, int64_t F, int64_t C, int64_t first,
                          int64_t tiles, const float* bias, const float* residual, bool relu, float* work, float* y) {
    const int64_t tiles_f = (F + 3) / 4, stride = layout.position;
    float* r = work;
    float* spare = work + 24 * C;
    for (int64_t i = 0; i < tiles; ++i) {
        const int64_t tile = first + i;
        const int64_t t0 = 4 * (tile / tiles_f), f0 = 4 * (tile % tiles_f);
        const float* mk = m + i * layout.tile;
        for (int b = 0; b < 6; ++b) {  // A^T M, [p][b][C]
            const float* mb = mk + b * stride;
            float* o = r + b * C;
            output_rows(mb, mb + 6 * stride, mb + 12 * stride, mb + 18 * stride, mb + 24 * stride, mb + 30 * stride, C,
                        o, o + 6 * C, o + 12 * C, o + 18 * C);
        }
        for (int p = 0; p < 4 && f0 + p < F; ++p) {  // (A^T M) A: outputs at times t0 .. t0 + 3
            const float* rp = r + p * 6 * C;
            float* o[4];
            for (int q = 0; q < 4; ++q) o[q] = t0 + q < T ? y + ((t0 + q) * F + f0 + p) * C : spare + q * C;
            output_rows(rp, rp + C, rp + 2 * C, rp + 3 * C, rp + 4 * C, rp + 5 * C, C, o[0], o[1], o[2], o[3]);
            for (int q = 0; q < 4; ++q) {
                const bool inside = t0 + q < T;
                const float* res = residual != nullptr && inside ? residual + ((t0 + q) * F + f0 + p) * C : nullptr;
                finish(o[q], bias, res, C, relu);
            }
        }
    }
}

}  // namespace pk::kernels::winograd_f4
