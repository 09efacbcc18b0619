// AVX-512 softmax and log-softmax: 16-lane max, exp (ops_vec_avx512.h) and partial sums
// combined in a fixed order, so a row's result depends only on the row. The row tail is one
// masked step of the same loop.
#include <immintrin.h>
#include <math.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx512.h"

namespace pk::kernels {
namespace {

float row_max(const float* x, int64_t cols) {
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (int64_t c = 0; c < cols; c += 16)
        m = _mm512_max_ps(m, _mm512_mask_loadu_ps(m, vec512::first_lanes(cols - c), x + c));
    return _mm512_reduce_max_ps(m);
}

// Sum of exp(x - m) over the row; when y is not null the exponentials are stored there.
float sum_exp(const float* x, int64_t cols, float m, float* y) {
    const __m512 vm = _mm512_set1_ps(m);
    __m512 s = _mm512_setzero_ps();
    for (int64_t c = 0; c < cols; c += 16) {
        const __mmask16 k = vec512::first_lanes(cols - c);
        const __m512 e = vec512::exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + c), vm));
        if (y) _mm512_mask_storeu_ps(y + c, k, e);
        s = _mm512_mask_add_ps(s, k, s, e);
    }
    return _mm512_reduce_add_ps(s);
}

void softmax_rows(const float* x, int64_t rows, int64_t cols, float* y) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const float m = row_max(xr, cols);
        const __m512 inv = _mm512_set1_ps(1.0f / sum_exp(xr, cols, m, yr));
        for (int64_t c = 0; c < cols; c += 16) {
            const __mmask16 k = vec512::first_lanes(cols - c);
            _mm512_mask_storeu_ps(yr + c, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, yr + c), inv));
        }
    }
}

void log_softmax_rows(const float* x, int64_t rows, int64_t cols, float* y) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const float m = row_max(xr, cols);
        // logf from the C library: a C++ inline wrapper instantiated here would be AVX-512 code.
        const __m512 log_sum = _mm512_set1_ps(logf(sum_exp(xr, cols, m, nullptr)));
        const __m512 vm = _mm512_set1_ps(m);
        for (int64_t c = 0; c < cols; c += 16) {
            const __mmask16 k = vec512::first_lanes(cols - c);
            _mm512_mask_storeu_ps(yr + c, k,
                                  _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, xr + c), vm), log_sum));
        }
    }
}

}  // namespace

void add_ops_softmax_avx512(KernelTable& t) {
    t.ops.softmax_rows = softmax_rows;
    t.ops.log_softmax_rows = log_softmax_rows;
}

}  // namespace pk::kernels
