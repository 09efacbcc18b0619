// The Q8_0 quad-layout kernels of the dotprod level (matmul_layout.h: weights as
// u = q + 128 in quads of k, activations as int8 blocks with their scale and correction), with
// the one integer step left to the including file:
//   Dot::block<L, NG>(isum, w, x): isum[0..NG) (4 NG outputs) += the exact integer products of
//   one quad of weights w[0..NG) (4 outputs each) with quad L of x (an int8x16 holding 4 quads
//   of one activation row), reading each u as the signed q = u XOR 0x80, so the sums start
//   at 0 and the activations' correction term is not used.
// The float side is the AVX2 / AVX-512 kernels' (q8_scale_add_neon). Include ONLY from
// *_dotprod.cpp; everything here is `static inline`. (The i8mm level's SMMLA kernels read
// weights in another order: matmul_kernels_i8mm.cpp.)
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "kernels/kernel_table.h"
#include "kernels/matmul_store_neon.h"

namespace pk::kernels::neon_q8 {

using namespace matmul_detail;

// Outputs [8 h, 8 h + 8) of R <= 4 rows of a tile (the rows row0 .. row0 + R of a
// kRowsQ8Vnni-row activation panel): the rows' integer sums (8 vectors), float accumulators (8),
// activations (8) and one quad of weights (2) fit the 32 vector registers without spilling,
// so an 8-row tile runs as two groups of rows, each as two halves; every weight vector is still
// loaded once per group.
template <class Dot, int R>
static inline void tile_rows(int64_t nblocks, int64_t h, const int8_t* a, const float* a_scale, const uint8_t* b,
                             float* c, int64_t ldc, const float* bias, bool accumulate) {
    constexpr int64_t VR = kRowsQ8Vnni;
    float32x4_t f[R][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) f[r][0] = f[r][1] = vdupq_n_f32(0.0f);
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const uint8_t* w = b + kPanel * sizeof(float) + 32 * h;
        int32x4_t isum[R][2];
        int8x16_t x[R][2];
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            isum[r][0] = isum[r][1] = vdupq_n_s32(0);
            x[r][0] = vld1q_s8(a + r * kQ8Block);
            x[r][1] = vld1q_s8(a + r * kQ8Block + 16);
        }
#pragma GCC unroll 8
        for (int t = 0; t < kQ8QuadsPerBlock; ++t) {
            const uint8x16_t wt[2] = {vld1q_u8(w + 64 * t), vld1q_u8(w + 64 * t + 16)};
#pragma GCC unroll 4
            for (int r = 0; r < R; ++r) {
                switch (t % 4) {
                    case 0: Dot::template block<0, 2>(isum[r], wt, x[r][t / 4]); break;
                    case 1: Dot::template block<1, 2>(isum[r], wt, x[r][t / 4]); break;
                    case 2: Dot::template block<2, 2>(isum[r], wt, x[r][t / 4]); break;
                    default: Dot::template block<3, 2>(isum[r], wt, x[r][t / 4]); break;
                }
            }
        }
        const float* ws = reinterpret_cast<const float*>(b) + 8 * h;
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) q8_scale_add_neon<2>(f[r], isum[r], ws, a_scale[r]);
        a += VR * kQ8Block;
        a_scale += VR;
        b += kQ8PanelBlockBytes;
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) store_row_neon<2>(c + r * ldc + 8 * h, f[r], bias ? bias + 8 * h : nullptr, accumulate);
}

template <class Dot, int R>
static inline void tile_group(int64_t row0, int64_t nblocks, const int8_t* a, const float* a_scale,
                              const uint8_t* b, float* c, int64_t ldc, const float* bias, bool accumulate) {
    for (int64_t h = 0; h < 2; ++h) {
        tile_rows<Dot, R>(nblocks, h, a + row0 * kQ8Block, a_scale + row0, b, c + row0 * ldc, ldc, bias, accumulate);
    }
}

// MatmulKernels::tile_q8_vnni: rows 0..3, then 4..7.
template <class Dot>
static inline void tile(int64_t rows, int64_t nblocks, const int8_t* a, const float* a_scale, const uint8_t* b,
                        float* c, int64_t ldc, const float* bias, bool accumulate) {
    static_assert(kRowsQ8Vnni == 8, "two groups of four rows");
    for (int64_t row0 = 0; row0 < rows; row0 += 4) {
        switch (rows - row0 < 4 ? rows - row0 : 4) {
            case 4: tile_group<Dot, 4>(row0, nblocks, a, a_scale, b, c, ldc, bias, accumulate); break;
            case 3: tile_group<Dot, 3>(row0, nblocks, a, a_scale, b, c, ldc, bias, accumulate); break;
            case 2: tile_group<Dot, 2>(row0, nblocks, a, a_scale, b, c, ldc, bias, accumulate); break;
            default: tile_group<Dot, 1>(row0, nblocks, a, a_scale, b, c, ldc, bias, accumulate); break;
        }
    }
}

// MatmulKernels::matvec_q8_vnni: one row, two integer chains per block (even and odd quads).
template <class Dot>
static inline void matvec(const int8_t* xq, const float* x_scale, int64_t nblocks, const uint8_t* panel,
                          float* out) {
    float32x4_t f[4];
    for (int q = 0; q < 4; ++q) f[q] = vdupq_n_f32(0.0f);
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const uint8_t* w = panel + kPanel * sizeof(float);
        int32x4_t i0[4], i1[4];
        for (int q = 0; q < 4; ++q) {
            i0[q] = i1[q] = vdupq_n_s32(0);
        }
        const int8x16_t x[2] = {vld1q_s8(xq), vld1q_s8(xq + 16)};
#pragma GCC unroll 4
        for (int t = 0; t < kQ8QuadsPerBlock; t += 2) {
            const uint8x16_t we[4] = {vld1q_u8(w + 64 * t), vld1q_u8(w + 64 * t + 16), vld1q_u8(w + 64 * t + 32),
                                      vld1q_u8(w + 64 * t + 48)};
            const uint8x16_t wo[4] = {vld1q_u8(w + 64 * t + 64), vld1q_u8(w + 64 * t + 80),
                                      vld1q_u8(w + 64 * t + 96), vld1q_u8(w + 64 * t + 112)};
            if (t % 4 == 0) {
                Dot::template block<0, 4>(i0, we, x[t / 4]);
                Dot::template block<1, 4>(i1, wo, x[t / 4]);
            } else {
                Dot::template block<2, 4>(i0, we, x[t / 4]);
                Dot::template block<3, 4>(i1, wo, x[t / 4]);
            }
        }
        int32x4_t isum[4];
        for (int q = 0; q < 4; ++q) isum[q] = vaddq_s32(i0[q], i1[q]);
        q8_scale_add_neon(f, isum, reinterpret_cast<const float*>(panel), x_scale[blk]);
        xq += kQ8Block;
        panel += kQ8PanelBlockBytes;
    }
    for (int q = 0; q < 4; ++q) vst1q_f32(out + 4 * q, f[q]);
}

}  // namespace pk::kernels::neon_q8
