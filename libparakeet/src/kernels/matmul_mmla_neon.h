// The operands and results of SMMLA (vmmlaq_s32, Armv8.6 FEAT_I8MM) for the i8mm level's tiles
// (matmul_kernels_i8mm.cpp, matmul_kquant_i8mm.cpp). One SMMLA multiplies a 2 x 8 int8 matrix
// (two rows' 8 bytes side by side) by an 8 x 2 one (two outputs' 8 bytes side by side) and adds
// the 2 x 2 int32 product exactly: acc = {r0.o0, r0.o1, r1.o0, r1.o1}, 32 multiply-adds where
// SDOT does 16. The weights are stored in that pair order (matmul_layout.h); the activations
// keep the VNNI layout and are paired here, per tile. Include ONLY from *_i8mm.cpp; everything
// here is `static inline`.
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "kernels/matmul_layout.h"

namespace pk::kernels::mmla {

// Why the activations are paired per tile and not by the quantiser: the activation panels are
// shared with the matrix-vector kernel and the K-quant path in one documented layout, and
// pairing costs 4 ZIP1/ZIP2 per 2 rows and block (loaded once per tile half), against the 32
// SMMLA per 2 rows and block that use them; the weights, read by every row panel, are the ones
// worth storing paired.
// x[m] = rows r0 and r0 + 1 (blocks of 32 int8 at a and a + 32) at k 8 m .. 8 m + 7, m < 4.
static inline void pair_rows(const int8_t* a, int8x16_t x[4]) {
    const int64x2_t r0lo = vreinterpretq_s64_s8(vld1q_s8(a)), r0hi = vreinterpretq_s64_s8(vld1q_s8(a + 16));
    const int64x2_t r1lo = vreinterpretq_s64_s8(vld1q_s8(a + matmul_detail::kQ8Block));
    const int64x2_t r1hi = vreinterpretq_s64_s8(vld1q_s8(a + matmul_detail::kQ8Block + 16));
    x[0] = vreinterpretq_s8_s64(vzip1q_s64(r0lo, r1lo));
    x[1] = vreinterpretq_s8_s64(vzip2q_s64(r0lo, r1lo));
    x[2] = vreinterpretq_s8_s64(vzip1q_s64(r0hi, r1hi));
    x[3] = vreinterpretq_s8_s64(vzip2q_s64(r0hi, r1hi));
}

// From one row pair's 2 x 2 sums for the output pairs (0, 1) and (2, 3): those 4 outputs of the
// pair's row `odd` (the same exact integers as SDOT's per-output sums).
static inline int32x4_t row_of(int32x4_t pair01, int32x4_t pair23, int odd) {
    const int64x2_t a = vreinterpretq_s64_s32(pair01), b = vreinterpretq_s64_s32(pair23);
    return vreinterpretq_s32_s64(odd ? vzip2q_s64(a, b) : vzip1q_s64(a, b));
}

// isum[p][q] += rows pair p (x[p][m]) times output pair q of oct m of the weights (the 4 vectors
// at w + 128 m: one half, 8 outputs, of a pair-order block or unit), for P row pairs.
template <int P>
static inline void oct_products(int32x4_t isum[][4], const int8x16_t x[][4], const int8_t* w, int m) {
    const int8x16_t wm[4] = {vld1q_s8(w + 128 * m), vld1q_s8(w + 128 * m + 16), vld1q_s8(w + 128 * m + 32),
                             vld1q_s8(w + 128 * m + 48)};
    for (int p = 0; p < P; ++p) {
        for (int q = 0; q < 4; ++q) isum[p][q] = vmmlaq_s32(isum[p][q], x[p][m], wm[q]);
    }
}

}  // namespace pk::kernels::mmla
