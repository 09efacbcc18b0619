// Q8_0 micro-kernels of the i8mm level (Armv8.6 FEAT_I8MM): SMMLA on weights packed at load in
// the pair order of matmul_layout.h (signed q, two outputs' 8 k per vector) against activations
// in the VNNI layout, paired per tile (matmul_mmla_neon.h). The integer block sums are exact, so
// they are the dotprod level's; the float step is the same function in the same order, so the
// bits are the dotprod level's too. The quantiser stays the dotprod level's (its correction
// term is not needed: the weights are signed).
#include <arm_neon.h>

#include <cstdint>

#include "kernels/kernel_table.h"
#include "kernels/matmul_mmla_neon.h"
#include "kernels/matmul_store_neon.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

// Outputs [8 h, 8 h + 8) of R <= 4 rows of a tile (rows row0 .. row0 + R of a kRowsQ8Vnni-row
// activation panel, whose missing rows are zero, so an odd R pairs its last row with a zero
// row): per block, the P = ceil(R / 2) row pairs (8 vectors), their sums for 4 output pairs (8),
// the float accumulators (8) and one oct of weights (4) fit the 32 vector registers, and each
// weight vector is loaded once for the 4 rows.
template <int R>
void tile_rows(int64_t nblocks, int64_t h, const int8_t* a, const float* a_scale, const uint8_t* b, float* c,
               int64_t ldc, const float* bias, bool accumulate) {
    constexpr int P = (R + 1) / 2;
    float32x4_t f[R][2];
    for (int r = 0; r < R; ++r) f[r][0] = f[r][1] = vdupq_n_f32(0.0f);
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const int8_t* w = reinterpret_cast<const int8_t*>(b + kPanel * sizeof(float)) + 64 * h;
        int8x16_t x[P][4];
        int32x4_t isum[P][4];
        for (int p = 0; p < P; ++p) {
            mmla::pair_rows(a + 2 * p * kQ8Block, x[p]);
            for (int q = 0; q < 4; ++q) isum[p][q] = vdupq_n_s32(0);
        }
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) mmla::oct_products<P>(isum, x, w, m);
        const float* ws = reinterpret_cast<const float*>(b) + 8 * h;
        for (int r = 0; r < R; ++r) {
            const int32x4_t rs[2] = {mmla::row_of(isum[r / 2][0], isum[r / 2][1], r % 2),
                                     mmla::row_of(isum[r / 2][2], isum[r / 2][3], r % 2)};
            q8_scale_add_neon<2>(f[r], rs, ws, a_scale[r]);
        }
        a += kRowsQ8Vnni * kQ8Block;
        a_scale += kRowsQ8Vnni;
        b += kQ8PanelBlockBytes;
    }
    for (int r = 0; r < R; ++r) store_row_neon<2>(c + r * ldc + 8 * h, f[r], bias ? bias + 8 * h : nullptr, accumulate);
}

template <int R>
void tile_group(int64_t row0, int64_t nblocks, const int8_t* a, const float* a_scale, const uint8_t* b, float* c,
                int64_t ldc, const float* bias, bool accumulate) {
    for (int64_t h = 0; h < 2; ++h) {
        tile_rows<R>(nblocks, h, a + row0 * kQ8Block, a_scale + row0, b, c + row0 * ldc, ldc, bias, accumulate);
    }
}

// MatmulKernels::tile_q8_vnni: rows 0..3, then 4..7.
void tile_q8_smmla(int64_t rows, int64_t nblocks, const int8_t* a, const float* a_scale, const int32_t*,
                   const uint8_t* b, float* c, int64_t ldc, const float* bias, bool accumulate) {
    static_assert(kRowsQ8Vnni == 8, "two groups of four rows");
    for (int64_t row0 = 0; row0 < rows; row0 += 4) {
        switch (rows - row0 < 4 ? rows - row0 : 4) {
            case 4: tile_group<4>(row0, nblocks, a, a_scale, b, c, ldc, bias, accumulate); break;
            case 3: tile_group<3>(row0, nblocks, a, a_scale, b, c, ldc, bias, accumulate); break;
            case 2: tile_group<2>(row0, nblocks, a, a_scale, b, c, ldc, bias, accumulate); break;
            default: tile_group<1>(row0, nblocks, a, a_scale, b, c, ldc, bias, accumulate); break;
        }
    }
}

// MatmulKernels::matvec_q8_vnni: the one row in both halves of the 2 x 8 operand, so each SMMLA
// gives two outputs' sums twice (16 useful multiply-adds, as one SDOT) on the same weights as
// the tile; 8 chains of 4 per block.
void matvec_q8_smmla(const int8_t* xq, const float* x_scale, const int32_t*, int64_t nblocks, const uint8_t* panel,
                     float* out) {
    float32x4_t f[4];
    for (int q = 0; q < 4; ++q) f[q] = vdupq_n_f32(0.0f);
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const int8_t* w = reinterpret_cast<const int8_t*>(panel + kPanel * sizeof(float));
        const int64x2_t lo = vreinterpretq_s64_s8(vld1q_s8(xq)), hi = vreinterpretq_s64_s8(vld1q_s8(xq + 16));
        const int8x16_t x[4] = {vreinterpretq_s8_s64(vdupq_laneq_s64(lo, 0)), vreinterpretq_s8_s64(vdupq_laneq_s64(lo, 1)),
                                vreinterpretq_s8_s64(vdupq_laneq_s64(hi, 0)), vreinterpretq_s8_s64(vdupq_laneq_s64(hi, 1))};
        int32x4_t acc[8];
        for (int p = 0; p < 8; ++p) acc[p] = vdupq_n_s32(0);
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) {
            for (int p = 0; p < 8; ++p) acc[p] = vmmlaq_s32(acc[p], x[m], vld1q_s8(w + 128 * m + 16 * p));
        }
        int32x4_t isum[4];
        for (int q = 0; q < 4; ++q) isum[q] = mmla::row_of(acc[2 * q], acc[2 * q + 1], 0);
        q8_scale_add_neon(f, isum, reinterpret_cast<const float*>(panel), x_scale[blk]);
        xq += kQ8Block;
        panel += kQ8PanelBlockBytes;
    }
    for (int q = 0; q < 4; ++q) vst1q_f32(out + 4 * q, f[q]);
}

}  // namespace

// The quantiser stays the dotprod level's; the weights are in the pair order (q8_uses_mmla).
void add_matmul_kernels_i8mm(KernelTable& t) {
    t.matmul.tile_q8_vnni = tile_q8_smmla;
    t.matmul.matvec_q8_vnni = matvec_q8_smmla;
}

}  // namespace pk::kernels
