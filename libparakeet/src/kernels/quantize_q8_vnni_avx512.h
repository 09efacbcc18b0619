// The AVX-512 activation quantiser of the VNNI Q8_0 matmul (MatmulKernels::quantize_q8_vnni,
// matmul_kernels_avx512.cpp, which alone includes this): each block of 32 floats becomes 32
// int8 with the scale and rounding of the AVX2 quantiser (IEEE quotients amax / 127 and
// 127 / amax, cvtps2dq in the default rounding mode, clamp to +-127) and the block's
// correction -128 * (sum of its int8).
//
// A GEMM row panel quantises the same block of its 8 rows one after the other, so the 8 blocks
// are done together: their two horizontal reductions (the largest |x|, the sum of the int8)
// run as one tree over 8 vectors and their divisions as one vector division, where a block
// alone pays a reduction tree and two scalar divisions of its own (the quantiser was ~5 % of a
// batched encoder pass). Maximum and integer sums are exact in any order, and the divisions
// are the same IEEE ones, so every block gets the bits it gets alone.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/matmul_layout.h"

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -W(maybe-)uninitialized
// reports at -O3 (a known false positive of the compiler's headers).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace pk::kernels::matmul_detail {

// One block of 32 activations on its own (matrix-vector rows: a panel of 1 row).
static inline void quantize_block(const float* x, int8_t* q, float* scale, int32_t* corr) {
    const __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(x0), _mm512_abs_ps(x1)));
    const Q8Scale s = q8_scale(amax);
    const __m512 id = _mm512_set1_ps(s.id);
    const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
    const __m512i q0 = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x0, id), lo), hi));
    const __m512i q1 = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x1, id), lo), hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtepi32_epi8(q1));
    *scale = s.d;
    *corr = -kQ8QuadBias * _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
}

// Lane r (r < 8) of the result: op over the 16 lanes of v[r]. A tree: pairs of vectors fold
// their halves, then their quarters, each 128-bit lane then holding one vector's four
// partials, which fold within the lane.
template <class Op>
static inline __m512 reduce_each_of_8(const __m512 (&v)[8], Op op) {
    __m512 a[4], b[2];
    for (int i = 0; i < 4; ++i)  // [v0 lanes 0,1 | v1 lanes 0,1] op [v0 lanes 2,3 | v1 lanes 2,3]
        a[i] = op(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0x44), _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0xEE));
    for (int i = 0; i < 2; ++i) {  // 128-bit lane j: vector 4i + j's four partials
        b[i] = op(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x88), _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xDD));
        b[i] = op(b[i], _mm512_permute_ps(b[i], 0xB1));  // swap neighbours
        b[i] = op(b[i], _mm512_permute_ps(b[i], 0x4E));  // swap pairs
    }
    return _mm512_permutex2var_ps(b[0], _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0), b[1]);
}

// Block b of each of 8 rows of x (row stride ldx; rows at or past `rows` quantise as zeros)
// into the panel's 8 consecutive blocks q [8][32], scale [8], corr [8].
static inline void quantize_blocks_of_8_rows(const float* x, int64_t rows, int64_t ldx, int8_t* q, float* scale,
                                             int32_t* corr) {
    __m512 x0[8], x1[8], amax[8];
    for (int r = 0; r < 8; ++r) {
        const bool live = r < rows;
        x0[r] = live ? _mm512_loadu_ps(x + r * ldx) : _mm512_setzero_ps();
        x1[r] = live ? _mm512_loadu_ps(x + r * ldx + 16) : _mm512_setzero_ps();
        amax[r] = _mm512_max_ps(_mm512_abs_ps(x0[r]), _mm512_abs_ps(x1[r]));
    }
    const __m512 m = reduce_each_of_8(amax, [](__m512 a, __m512 b) { return _mm512_max_ps(a, b); });
    // q8_scale on 8 lanes: d = amax / 127, id = 127 / amax where amax > 0, else 0.
    const __m512 d = _mm512_div_ps(m, _mm512_set1_ps(127.0f));
    const __m512 id = _mm512_maskz_div_ps(_mm512_cmp_ps_mask(m, _mm512_setzero_ps(), _CMP_GT_OQ),
                                          _mm512_set1_ps(127.0f), m);
    alignas(64) float ids[16];
    _mm512_store_ps(ids, id);
    const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
    __m512 sums[8];
    for (int r = 0; r < 8; ++r) {
        const __m512 idr = _mm512_set1_ps(ids[r]);
        const __m512i q0 = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x0[r], idr), lo), hi));
        const __m512i q1 = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x1[r], idr), lo), hi));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + r * kQ8Block), _mm512_cvtepi32_epi8(q0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + r * kQ8Block + 16), _mm512_cvtepi32_epi8(q1));
        sums[r] = _mm512_castsi512_ps(_mm512_add_epi32(q0, q1));
    }
    const __m512i s = _mm512_castps_si512(reduce_each_of_8(sums, [](__m512 a, __m512 b) {
        return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
    }));
    _mm256_storeu_ps(scale, _mm512_castps512_ps256(d));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(corr),
                        _mm512_castsi512_si256(_mm512_mullo_epi32(s, _mm512_set1_epi32(-kQ8QuadBias))));
}

// MatmulKernels::quantize_q8_vnni.
static inline void quantize_q8_vnni_avx512(const float* x, int64_t rows, int64_t ldx, int64_t nblocks, int64_t mr,
                                           int8_t* q, float* scale, int32_t* corr) {
    static_assert(kRowsQ8Vnni == 8, "a GEMM row panel is the 8 rows of reduce_each_of_8");
    if (mr != kRowsQ8Vnni) {
        quantize_quad_panel(x, rows, ldx, nblocks, mr, q, scale, corr,
                            [](const float* xb, int8_t* qb, float* sb, int32_t* cb) { quantize_block(xb, qb, sb, cb); });
        return;
    }
    for (int64_t b = 0; b < nblocks; ++b)
        quantize_blocks_of_8_rows(x + b * kQ8Block, rows, ldx, q + b * 8 * kQ8Block, scale + b * 8, corr + b * 8);
}

}  // namespace pk::kernels::matmul_detail
