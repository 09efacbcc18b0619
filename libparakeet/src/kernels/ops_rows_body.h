// The passes the speaker networks run over channels-last maps between their products (a
// BatchNorm's per-channel affine, ReLU or Hardtanh clamps, a residual's sum), as plain loops over
// contiguous channels that ops_rows.cpp and its per-level files compile with their level's vector
// width: in the networks' own files, built for the baseline ISA, the same loops ran 4 floats at a
// time. The clamps are std::max / std::min in the networks' order, so a NaN passes through as it
// did. Only `static inline` code here (kernel_table.h: headers of ISA files).
#pragma once

#include <algorithm>
#include <cstdint>

namespace pk::kernels::rows {

template <bool kAffine, bool kClamp>
static inline void affine_clamp_loop(const float* x, int64_t ldx, int64_t rows, int64_t cols, const float* scale,
                                     const float* shift, float hi, float* y, int64_t ldy) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* src = x + r * ldx;
        float* dst = y + r * ldy;
        for (int64_t c = 0; c < cols; ++c) {
            float v = src[c];
            if (kAffine) v = v * scale[c] + shift[c];
            if (kClamp) v = std::min(std::max(v, 0.0f), hi);
            dst[c] = v;
        }
    }
}

// OpsKernels::affine_clamp_rows.
static inline void affine_clamp_rows(const float* x, int64_t ldx, int64_t rows, int64_t cols, const float* scale,
                                     const float* shift, bool clamp, float hi, float* y, int64_t ldy) {
    const bool affine = scale != nullptr;
    if (affine && clamp)
        affine_clamp_loop<true, true>(x, ldx, rows, cols, scale, shift, hi, y, ldy);
    else if (affine)
        affine_clamp_loop<true, false>(x, ldx, rows, cols, scale, shift, hi, y, ldy);
    else if (clamp)
        affine_clamp_loop<false, true>(x, ldx, rows, cols, scale, shift, hi, y, ldy);
    else
        affine_clamp_loop<false, false>(x, ldx, rows, cols, scale, shift, hi, y, ldy);
}

// OpsKernels::add_clamp.
static inline void add_clamp(const float* a, const float* b, int64_t n, float hi, float* y) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(a[i] + b[i], 0.0f), hi);
}

// OpsKernels::clamped_sum_rows.
static inline void clamped_sum_rows(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows,
                                    int64_t cols, float hi, float* y, int64_t ldy) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* ar = a + r * lda;
        const float* br = b + r * ldb;
        float* yr = y + r * ldy;
        for (int64_t c = 0; c < cols; ++c)
            yr[c] = std::min(std::max(ar[c], 0.0f), hi) + std::min(std::max(br[c], 0.0f), hi);
    }
}

}  // namespace pk::kernels::rows
