// AVX2/FMA building blocks shared by the ops and conv kernels. Include ONLY from *_avx2.cpp
// files (they are the only ones compiled with -mavx2 -mfma). Everything here is `static
// inline`, so no AVX2-encoded copy of a helper can be picked by the linker for a portable
// translation unit.
#pragma once

#include <immintrin.h>

#include "kernels/erfc_poly.h"
#include "kernels/exp_poly.h"

#include <cstdint>

namespace pk::kernels::vec {

// Lane mask selecting the first `rem` lanes (0 <= rem <= 8), for the masked loads and stores
// that finish a row. Tails go through the same vector code as the body, so an element's
// value never depends on where a chunk boundary fell.
static inline __m256i tail_mask(int64_t rem) {
    alignas(32) static const int32_t table[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                  0,  0,  0,  0,  0,  0,  0,  0};
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 - rem));
}

// Horizontal sum / max of the 8 lanes, in a fixed order.
static inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

static inline float hmax(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

// exp(x) for 8 lanes, within about 2 ulp of expf for x in [-87.3, 88]. Below -87.3 the
// result is 0 (the true value is subnormal), above 88 it saturates at exp(88) ~ 1.65e38;
// neither matters to softmax (x <= 0) or sigmoid (1 + huge). Cody-Waite reduction
// x = n*ln2 + r with |r| <= ln2/2, a degree-7 polynomial for exp(r), and 2^n put into the
// exponent bits.
static inline __m256 exp(__m256 x) {
    const __m256 lo = _mm256_set1_ps(-87.33654f);
    const __m256 hi = _mm256_set1_ps(88.0f);
    const __m256 underflow = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);

    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(exp_poly::kLog2e)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(exp_poly::kLn2Hi), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(exp_poly::kLn2Lo), r);

    __m256 p = _mm256_set1_ps(exp_poly::kC0);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(exp_poly::kC1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(exp_poly::kC2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(exp_poly::kC3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(exp_poly::kC4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(exp_poly::kC5));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));

    const __m256i e = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

// x * sigmoid(g) = x / (1 + exp(-g)), the core of SiLU (g = x) and GLU.
static inline __m256 times_sigmoid(__m256 x, __m256 g) {
    const __m256 e = exp(_mm256_sub_ps(_mm256_setzero_ps(), g));
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

// x · Φ(x) = x/2 · (1 + erf(x/√2)), PyTorch's exact GELU: Φ(-|x|) from erfc_poly.h, and
// Φ(x) = 1 - Φ(-x) for x >= 0 (no cancellation in the negative tail, unlike 1 + erf).
static inline __m256 gelu_erf(__m256 x) {
    using namespace erfc_poly;
    const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(kInvSqrt2));
    const __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(z, _mm256_set1_ps(0.5f), _mm256_set1_ps(1.0f)));
    __m256 p = _mm256_set1_ps(kC9);
    for (const float c : {kC8, kC7, kC6, kC5, kC4, kC3, kC2, kC1, kC0}) p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(c));
    const __m256 tail = _mm256_mul_ps(_mm256_mul_ps(t, _mm256_set1_ps(0.5f)), exp(_mm256_fnmadd_ps(z, z, p)));
    const __m256 cdf = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), tail), tail,
                                        _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
    return _mm256_mul_ps(x, cdf);
}

}  // namespace pk::kernels::vec
