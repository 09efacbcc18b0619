// AVX-512 building blocks shared by the ops kernels. Include ONLY from *_avx512.cpp files
// (they are the only ones compiled with -mavx512f). Everything here is `static inline`, so no
// AVX-512-encoded copy of a helper can be picked by the linker for a portable translation unit.
#pragma once

#include <immintrin.h>

#include "kernels/exp_poly.h"
#include "kernels/gelu_tail_poly.h"

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -W(maybe-)uninitialized
// reports at -O3 (a known false positive of the compiler's headers); every includer is an
// AVX-512 file.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <cstdint>

namespace pk::kernels::vec512 {

// Lanes [0, n) of a 16-lane vector, n clamped to 0..16: the masks that finish a row, so tails
// go through the same vector code as the body.
static inline __mmask16 first_lanes(int64_t n) {
    if (n <= 0) return 0;
    if (n >= 16) return 0xFFFF;
    return static_cast<__mmask16>((1u << n) - 1u);
}

// Transposes 16 rows of 16 lanes in registers: afterwards r[i] lane j is r[j] lane i before.
static inline void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {  // r[4i + k], 128-bit block l: column 4l + k, rows 4i..4i+3
        r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 4; ++k) {
            t[8 * i + k] = _mm512_shuffle_f32x4(r[8 * i + k], r[8 * i + 4 + k], 0x88);
            t[8 * i + 4 + k] = _mm512_shuffle_f32x4(r[8 * i + k], r[8 * i + 4 + k], 0xdd);
        }
    for (int k = 0; k < 8; ++k) {
        r[k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
        r[8 + k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xdd);
    }
}

// exp(x) for 16 lanes: the reduction and polynomial of the AVX2 exp (ops_vec_avx2.h), with
// 2^n applied by vscalefps, which also gives the right 0 / subnormal below -87.3 and inf
// above 88.7, so no range masks are needed. x is clamped at -104 (exp is 0 there in floats)
// so that -inf gives 0, not NaN.
static inline __m512 exp(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(exp_poly::kLog2e)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(exp_poly::kLn2Hi), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(exp_poly::kLn2Lo), r);

    __m512 p = _mm512_set1_ps(exp_poly::kC0);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(exp_poly::kC1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(exp_poly::kC2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(exp_poly::kC3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(exp_poly::kC4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(exp_poly::kC5));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, n);
}

// x * sigmoid(g) = x / (1 + exp(-g)), the core of SiLU (g = x) and GLU.
static inline __m512 times_sigmoid(__m512 x, __m512 g) {
    const __m512 e = exp(_mm512_sub_ps(_mm512_setzero_ps(), g));
    return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// x · Φ(x), PyTorch's exact GELU: Φ(-|x|) from gelu_tail_poly.h's 16 polynomials (vpermps picks
// each lane's coefficients), Φ(x) = 1 - Φ(-x) for x >= 0. Within 3.1e-8 · |x| of the exact one,
// like vec::gelu_erf of ops_vec_avx2.h (which takes the tail from erfc_poly.h's fit with a
// division and an exp) but not its bits.
static inline __m512 gelu_erf(__m512 x) {
    using namespace gelu_tail_poly;
    const __m512 a = _mm512_abs_ps(x);
    const __m512 s = _mm512_mul_ps(a, _mm512_set1_ps(1.0f / kWidth));
    const __m512i interval = _mm512_cvttps_epi32(_mm512_min_ps(s, _mm512_set1_ps(kIntervals - 1.0f)));
    // u = a - (interval + 1/2) · kWidth
    const __m512 u = _mm512_fmsub_ps(_mm512_sub_ps(s, _mm512_cvtepi32_ps(interval)), _mm512_set1_ps(kWidth),
                                     _mm512_set1_ps(0.5f * kWidth));
    __m512 p = _mm512_permutexvar_ps(interval, _mm512_load_ps(kTail[kDegree]));
    for (int k = kDegree - 1; k >= 0; --k)
        p = _mm512_fmadd_ps(p, u, _mm512_permutexvar_ps(interval, _mm512_load_ps(kTail[k])));
    const __m512 tail = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(kLimit), _CMP_LT_OQ), p);
    const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mul_ps(x, _mm512_mask_blend_ps(negative, _mm512_sub_ps(_mm512_set1_ps(1.0f), tail), tail));
}

}  // namespace pk::kernels::vec512
