// The Winograd F(2x2, 3x3) transforms (conv_winograd_f2.h) as plain loops over the channels,
// included by conv_winograd_f2.cpp and its per-level files, each of which compiles them with its
// level's vector width: the loops run over contiguous channels and vectorise as they are. Only
// `static inline` code here (kernel_table.h: headers of ISA files).
#pragma once

#include <algorithm>
#include <cstdint>

namespace pk::kernels::winograd_f2 {

// B^T applied across four rows of n values: (d0 - d2, d1 + d2, d2 - d1, d1 - d3).
static inline void combine(const float* __restrict d0, const float* __restrict d1, const float* __restrict d2,
                           const float* __restrict d3, int64_t n, float* __restrict o0, float* __restrict o1,
                           float* __restrict o2, float* __restrict o3) {
    for (int64_t c = 0; c < n; ++c) {
        o0[c] = d0[c] - d2[c];
        o1[c] = d1[c] + d2[c];
        o2[c] = d2[c] - d1[c];
        o3[c] = d1[c] - d3[c];
    }
}

// A^T applied across four rows of n values: (m0 + m1 + m2, m1 - m2 - m3).
static inline void reduce(const float* __restrict m0, const float* __restrict m1, const float* __restrict m2,
                          const float* __restrict m3, int64_t n, float* __restrict o0, float* __restrict o1) {
    for (int64_t c = 0; c < n; ++c) {
        o0[c] = m0[c] + m1[c] + m2[c];
        o1[c] = m1[c] - m2[c] - m3[c];
    }
}

static inline void finish(float* __restrict y, const float* __restrict bias, int64_t n, bool relu) {
    if (bias != nullptr)
        for (int64_t c = 0; c < n; ++c) y[c] += bias[c];
    if (relu)
        for (int64_t c = 0; c < n; ++c) y[c] = std::max(y[c], 0.0f);
}

// work: [16][C] rows of B^T d, then C zeros (the input outside the map).
static inline void input(const float* x, int64_t T, int64_t F, int64_t C, int64_t first, int64_t tiles, float* work,
                         float* v) {
    const int64_t tiles_f = (F + 1) / 2;
    float* r = work;
    float* zeros = work + 16 * C;
    std::fill(zeros, zeros + C, 0.0f);
    for (int64_t i = 0; i < tiles; ++i) {
        const int64_t tile = first + i;
        const int64_t t0 = 2 * (tile / tiles_f) - 1, f0 = 2 * (tile % tiles_f) - 1;
        const float* d[16];
        for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b) {
                const int64_t f = f0 + a, t = t0 + b;
                d[a * 4 + b] = f < 0 || f >= F || t < 0 || t >= T ? zeros : x + (t * F + f) * C;
            }
        for (int b = 0; b < 4; ++b)  // B^T d, [a][b][C]
            combine(d[b], d[4 + b], d[8 + b], d[12 + b], C, r + b * C, r + (4 + b) * C, r + (8 + b) * C,
                    r + (12 + b) * C);
        for (int a = 0; a < 4; ++a) {  // (B^T d) B
            const float* ra = r + a * 4 * C;
            float* out[4];
            for (int b = 0; b < 4; ++b) out[b] = v + ((a * 4 + b) * tiles + i) * C;
            combine(ra, ra + C, ra + 2 * C, ra + 3 * C, C, out[0], out[1], out[2], out[3]);
        }
    }
}

// work: [2][4][C] rows of A^T M, then C floats for the outputs past the map's last step.
static inline void output(const float* m, int64_t T, int64_t F, int64_t C, int64_t first, int64_t tiles,
                          const float* bias, bool relu, float* work, float* y) {
    const int64_t tiles_f = (F + 1) / 2, stride = tiles * C;
    float* r = work;
    float* spare = work + 16 * C;
    for (int64_t i = 0; i < tiles; ++i) {
        const int64_t tile = first + i;
        const int64_t t0 = 2 * (tile / tiles_f), f0 = 2 * (tile % tiles_f);
        const float* mk = m + i * C;
        for (int b = 0; b < 4; ++b)  // A^T M, [p][b][C]
            reduce(mk + b * stride, mk + (4 + b) * stride, mk + (8 + b) * stride, mk + (12 + b) * stride, C,
                   r + b * C, r + (4 + b) * C);
        for (int p = 0; p < 2 && f0 + p < F; ++p) {  // (A^T M) A: outputs at times t0, t0 + 1
            const float* rp = r + p * 4 * C;
            float* y0 = y + (t0 * F + f0 + p) * C;
            float* y1 = t0 + 1 < T ? y + ((t0 + 1) * F + f0 + p) * C : spare;
            reduce(rp, rp + C, rp + 2 * C, rp + 3 * C, C, y0, y1);
            finish(y0, bias, C, relu);
            finish(y1, bias, C, relu);
        }
    }
}

}  // namespace pk::kernels::winograd_f2
