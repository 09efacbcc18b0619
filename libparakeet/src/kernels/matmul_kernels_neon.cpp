// Advanced SIMD micro-kernels of the matmul (the neon level of kernel_table.h, inherited by
// dotprod and i8mm). Same layouts and tiles as the portable and AVX2 kernels.
//
// f32 (and F16, widened per panel slice by the driver): a 6 x 16 register tile, 24 of the 32
// vector registers as accumulators, four panel vectors per k and one FMLA by scalar per row
// and vector: 24 FMAs for 4 vector loads and 6 scalars.
//
// Q8_0 on the pair layout (what this level packs): the widened weights of a pair of k are
// loaded split into their even and odd k (LD2), one 16-byte load holds the pair of each of the
// 4 rows, and SMLAL by element multiplies them into int32, 8 outputs at a time (the tile runs
// as two halves of 8 outputs, which fit the registers). Per block of 32 the exact
// int32 sums are scaled by d_w * d_x into float accumulators: acc = fma(float(isum),
// d_w * d_x, acc), as at the AVX2 level.
//
// F16 is converted by FCVTL (exact), then multiplied as f32.
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "kernels/kernel_table.h"
#include "kernels/matmul_store_neon.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

constexpr int64_t MR = kRowsF32;
constexpr int64_t QR = kRowsQ8;

// f32 tile of R <= 6 rows (the tile of a partial last row panel computes only its rows, with
// the same instructions per element as the full tile).
template <int R>
void tile_f32_rows(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                   const float* bias, bool accumulate) {
    float32x4_t acc[R][4];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
        for (int q = 0; q < 4; ++q) acc[r][q] = vdupq_n_f32(0.0f);
#pragma GCC unroll 2
    for (int64_t k = 0; k < kc; ++k) {
        const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
        const float32x4_t b2 = vld1q_f32(b + 8), b3 = vld1q_f32(b + 12);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            acc[r][0] = vfmaq_n_f32(acc[r][0], b0, a[r]);
            acc[r][1] = vfmaq_n_f32(acc[r][1], b1, a[r]);
            acc[r][2] = vfmaq_n_f32(acc[r][2], b2, a[r]);
            acc[r][3] = vfmaq_n_f32(acc[r][3], b3, a[r]);
        }
        a += MR;
        b += kPanel;
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) store_row_neon(c + r * ldc, acc[r], bias, accumulate);
}

void tile_f32(int64_t rows, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
              const float* bias, bool accumulate) {
    static_assert(MR == 6, "one instantiation per row count");
    switch (rows) {
        case 6: return tile_f32_rows<6>(kc, a, b, c, ldc, bias, accumulate);
        case 5: return tile_f32_rows<5>(kc, a, b, c, ldc, bias, accumulate);
        case 4: return tile_f32_rows<4>(kc, a, b, c, ldc, bias, accumulate);
        case 3: return tile_f32_rows<3>(kc, a, b, c, ldc, bias, accumulate);
        case 2: return tile_f32_rows<2>(kc, a, b, c, ldc, bias, accumulate);
        default: return tile_f32_rows<1>(kc, a, b, c, ldc, bias, accumulate);
    }
}

// isum[0..2) (8 outputs of one row) += the products of one pair of k's weights, w = (even k,
// odd k) of the 8 outputs as LD2 splits the layout's interleaved pairs, with that row's x0 and
// x1: lanes L and L + 1 of x (SMLAL by element).
template <int L>
inline void pair_products(int32x4_t isum[2], const int16x8x2_t& w, int16x8_t x) {
    isum[0] = vmlal_laneq_s16(isum[0], vget_low_s16(w.val[0]), x, L);
    isum[1] = vmlal_high_laneq_s16(isum[1], w.val[0], x, L);
    isum[0] = vmlal_laneq_s16(isum[0], vget_low_s16(w.val[1]), x, L + 1);
    isum[1] = vmlal_high_laneq_s16(isum[1], w.val[1], x, L + 1);
}

// Outputs [8 h, 8 h + 8) of a Q8_0 tile of R <= 4 rows over wide blocks (see tile_f32_rows):
// the rows' integer sums (8 vectors), float accumulators (8), broadcast activations (8) and a
// pair's weights (2) fit the 32 vector registers; the whole tile would spill.
template <int R>
void tile_q8_half(int64_t nblocks, int64_t h, const int16_t* a, const float* a_scale, const uint8_t* b,
                  float* c, int64_t ldc, const float* bias, bool accumulate) {
    float32x4_t f[R][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) f[r][0] = f[r][1] = vdupq_n_f32(0.0f);
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        int32x4_t isum[R][2];
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) isum[r][0] = isum[r][1] = vdupq_n_s32(0);
        const int16_t* q = reinterpret_cast<const int16_t*>(b + kPanel * sizeof(float)) + 16 * h;
#pragma GCC unroll 16
        for (int64_t t = 0; t < kQ8PairsPerBlock; ++t) {
            const int16x8x2_t w = vld2q_s16(q + t * 2 * kPanel);  // even and odd k of the 8 outputs
            const int16x8_t x = vld1q_s16(a + t * 2 * QR);        // the pair of each of the 4 rows
            pair_products<0>(isum[0], w, x);
            if constexpr (R > 1) pair_products<2>(isum[1], w, x);
            if constexpr (R > 2) pair_products<4>(isum[2], w, x);
            if constexpr (R > 3) pair_products<6>(isum[3], w, x);
        }
        const float* ws = reinterpret_cast<const float*>(b) + 8 * h;
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) q8_scale_add_neon<2>(f[r], isum[r], ws, a_scale[r]);
        a += 2 * kQ8PairsPerBlock * QR;
        a_scale += QR;
        b += kQ8WideBlockBytes;
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) store_row_neon<2>(c + r * ldc + 8 * h, f[r], bias ? bias + 8 * h : nullptr, accumulate);
}

template <int R>
void tile_q8_rows(int64_t nblocks, const int16_t* a, const float* a_scale, const uint8_t* b, float* c,
                  int64_t ldc, const float* bias, bool accumulate) {
    for (int64_t h = 0; h < 2; ++h) tile_q8_half<R>(nblocks, h, a, a_scale, b, c, ldc, bias, accumulate);
}

void tile_q8(int64_t rows, int64_t nblocks, const int16_t* a, const float* a_scale,
             const uint8_t* b, float* c, int64_t ldc, const float* bias, bool accumulate) {
    static_assert(QR == 4, "one instantiation per row count");
    switch (rows) {
        case 4: return tile_q8_rows<4>(nblocks, a, a_scale, b, c, ldc, bias, accumulate);
        case 3: return tile_q8_rows<3>(nblocks, a, a_scale, b, c, ldc, bias, accumulate);
        case 2: return tile_q8_rows<2>(nblocks, a, a_scale, b, c, ldc, bias, accumulate);
        default: return tile_q8_rows<1>(nblocks, a, a_scale, b, c, ldc, bias, accumulate);
    }
}

void widen_q8(const uint8_t* blocks, int64_t nblocks, uint8_t* wide) {
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        std::memcpy(wide, blocks, kPanel * sizeof(float));
        const int8_t* q = reinterpret_cast<const int8_t*>(blocks + kPanel * sizeof(float));
        int16_t* w = reinterpret_cast<int16_t*>(wide + kPanel * sizeof(float));
        for (int64_t i = 0; i < kPanel * kQ8Block; i += 16) {
            const int8x16_t v = vld1q_s8(q + i);
            vst1q_s16(w + i, vmovl_s8(vget_low_s8(v)));
            vst1q_s16(w + i + 8, vmovl_high_s8(v));
        }
        blocks += kQ8PanelBlockBytes;
        wide += kQ8WideBlockBytes;
    }
}

// The pair at p (two int16) in every 32-bit lane: lanes 0 and 1 are the pair.
inline int16x8_t vld1q_dup_s32_as_s16(const int16_t* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return vreinterpretq_s16_s32(vdupq_n_s32(v));
}

inline float32x4_t load_half4(const uint16_t* p) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

void f16_to_f32_n(const uint16_t* src, int64_t n, float* dst) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, load_half4(src + i));
    if (i < n) {
        uint16_t h[4] = {};
        float f[4];
        std::memcpy(h, src + i, static_cast<size_t>(n - i) * sizeof(uint16_t));
        vst1q_f32(f, load_half4(h));
        std::memcpy(dst + i, f, static_cast<size_t>(n - i) * sizeof(float));
    }
}

// The matrix-vector products are memory bound: two independent k streams keep enough loads
// in flight; they are summed in a fixed order at the end. Load(p, q) gives floats 4q..4q+3 of
// the panel row at p.
template <class Elem, class Load>
void matvec_rows(const float* x, int64_t K, const Elem* panel, float* out, Load load) {
    float32x4_t s[2][4];
    for (int h = 0; h < 2; ++h)
        for (int q = 0; q < 4; ++q) s[h][q] = vdupq_n_f32(0.0f);
    int64_t k = 0;
    for (; k + 2 <= K; k += 2) {
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const Elem* p = panel + (k + h) * kPanel;
            for (int q = 0; q < 4; ++q) s[h][q] = vfmaq_n_f32(s[h][q], load(p, q), x[k + h]);
        }
    }
    if (k < K) {
        const Elem* p = panel + k * kPanel;
        for (int q = 0; q < 4; ++q) s[0][q] = vfmaq_n_f32(s[0][q], load(p, q), x[k]);
    }
    for (int q = 0; q < 4; ++q) vst1q_f32(out + 4 * q, vaddq_f32(s[0][q], s[1][q]));
}

void matvec_f32(const float* x, int64_t K, const float* panel, float* out) {
    matvec_rows(x, K, panel, out, [](const float* p, int q) { return vld1q_f32(p + 4 * q); });
}

void matvec_f16(const float* x, int64_t K, const uint16_t* panel, float* out) {
    matvec_rows(x, K, panel, out, [](const uint16_t* p, int q) { return load_half4(p + 4 * q); });
}

// One row on the int8 panel blocks (not widened): each pair's 32 weights widened in registers.
void matvec_q8(const int16_t* xq, const float* x_scale, int64_t nblocks, const uint8_t* panel,
               float* out) {
    float32x4_t f[4];
    for (int q = 0; q < 4; ++q) f[q] = vdupq_n_f32(0.0f);
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const int8_t* q8 = reinterpret_cast<const int8_t*>(panel + kPanel * sizeof(float));
        int32x4_t isum[4];
        for (int q = 0; q < 4; ++q) isum[q] = vdupq_n_s32(0);
        for (int64_t t = 0; t < kQ8PairsPerBlock; ++t) {
            const int8x16x2_t v = vld2q_s8(q8 + t * 2 * kPanel);  // even and odd k of the 16 outputs
            const int16x8x2_t lo = {{vmovl_s8(vget_low_s8(v.val[0])), vmovl_s8(vget_low_s8(v.val[1]))}};
            const int16x8x2_t hi = {{vmovl_high_s8(v.val[0]), vmovl_high_s8(v.val[1])}};
            const int16x8_t x = vld1q_dup_s32_as_s16(xq + 2 * t);
            pair_products<0>(isum, lo, x);
            pair_products<0>(isum + 2, hi, x);
        }
        q8_scale_add_neon(f, isum, reinterpret_cast<const float*>(panel), x_scale[blk]);
        xq += 2 * kQ8PairsPerBlock;
        panel += kQ8PanelBlockBytes;
    }
    for (int q = 0; q < 4; ++q) vst1q_f32(out + 4 * q, f[q]);
}

}  // namespace

// Keeps the portable activation packer and quantisers (pack_rows_f32, quantize_row_q8,
// quantize_panel_q8): linear in the activations, a small share of a product's time.
void add_matmul_kernels_neon(KernelTable& t) {
    MatmulKernels& m = t.matmul;
    m.tile_f32 = tile_f32;
    m.tile_q8 = tile_q8;
    m.widen_q8 = widen_q8;
    m.f16_to_f32 = f16_to_f32_n;
    m.matvec_f32 = matvec_f32;
    m.matvec_f16 = matvec_f16;
    m.matvec_q8 = matvec_q8;
}

}  // namespace pk::kernels
