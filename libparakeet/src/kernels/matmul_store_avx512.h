// The last step of the AVX-512 matmul tiles (matmul_kernels_avx512.cpp, the bf16 kernels):
// one row of 16 outputs written out, or the rows of a tile over two panels. Included only by
// *_avx512.cpp files; `static` so that no copy compiled with AVX-512 can be picked by the
// linker elsewhere.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace pk::kernels::matmul_detail {

// c = acc (+ bias) on a K slice's first pass, c += acc on later ones.
static inline void store_row_avx512(float* c, __m512 acc, const float* bias, bool accumulate) {
    if (accumulate) {
        acc = _mm512_add_ps(_mm512_loadu_ps(c), acc);
    } else if (bias) {
        acc = _mm512_add_ps(acc, _mm512_loadu_ps(bias));
    }
    _mm512_storeu_ps(c, acc);
}

// R rows of a tile over two panels: row r's 32 outputs are lo[r], then hi[r] (bias likewise).
template <int R>
static inline void store_pair_rows_avx512(float* c, int64_t ldc, const __m512* lo, const __m512* hi,
                                          const float* bias, bool accumulate) {
    const float* bias_hi = bias ? bias + 16 : nullptr;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        store_row_avx512(c + r * ldc, lo[r], bias, accumulate);
        store_row_avx512(c + r * ldc + 16, hi[r], bias_hi, accumulate);
    }
}

}  // namespace pk::kernels::matmul_detail
