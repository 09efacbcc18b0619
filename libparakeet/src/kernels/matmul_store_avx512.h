// The last step of the AVX-512 matmul tiles (matmul_kernels_avx512.cpp, the bf16 kernels):
// one row of 16 outputs written out. Included only by *_avx512.cpp files; `static` so that no
// copy compiled with AVX-512 can be picked by the linker elsewhere.
#pragma once

#include <immintrin.h>

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

}  // namespace pk::kernels::matmul_detail
