// AVX2/FMA softmax and log-softmax: vector max, vector exp (ops_vec_avx2.h) and partial sums
// combined in a fixed order, so a row's result depends only on the row.
#include <immintrin.h>
#include <math.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx2.h"

namespace pk::kernels {
namespace {

float row_max(const float* x, int64_t body, int64_t tail, __m256i mask) {
    const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
    __m256 m = neg_inf;
    for (int64_t c = 0; c < body; c += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + c));
    if (tail) {
        const __m256 v = _mm256_blendv_ps(neg_inf, _mm256_maskload_ps(x + body, mask),
                                          _mm256_castsi256_ps(mask));
        m = _mm256_max_ps(m, v);
    }
    return vec::hmax(m);
}

// Sum of exp(x - m) over the row; when y is not null the exponentials are stored there.
float sum_exp(const float* x, int64_t body, int64_t tail, __m256i mask, float m, float* y) {
    const __m256 vm = _mm256_set1_ps(m);
    __m256 s = _mm256_setzero_ps();
    for (int64_t c = 0; c < body; c += 8) {
        const __m256 e = vec::exp(_mm256_sub_ps(_mm256_loadu_ps(x + c), vm));
        if (y) _mm256_storeu_ps(y + c, e);
        s = _mm256_add_ps(s, e);
    }
    if (tail) {
        const __m256 e = _mm256_and_ps(
            vec::exp(_mm256_sub_ps(_mm256_maskload_ps(x + body, mask), vm)),
            _mm256_castsi256_ps(mask));
        if (y) _mm256_maskstore_ps(y + body, mask, e);
        s = _mm256_add_ps(s, e);
    }
    return vec::hsum(s);
}

void softmax_rows(const float* x, int64_t rows, int64_t cols, float* y) {
    const int64_t tail = cols % 8;
    const int64_t body = cols - tail;
    const __m256i mask = vec::tail_mask(tail);
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const float m = row_max(xr, body, tail, mask);
        const __m256 inv = _mm256_set1_ps(1.0f / sum_exp(xr, body, tail, mask, m, yr));
        for (int64_t c = 0; c < body; c += 8)
            _mm256_storeu_ps(yr + c, _mm256_mul_ps(_mm256_loadu_ps(yr + c), inv));
        if (tail)
            _mm256_maskstore_ps(yr + body, mask,
                                _mm256_mul_ps(_mm256_maskload_ps(yr + body, mask), inv));
    }
}

void log_softmax_rows(const float* x, int64_t rows, int64_t cols, float* y) {
    const int64_t tail = cols % 8;
    const int64_t body = cols - tail;
    const __m256i mask = vec::tail_mask(tail);
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const float m = row_max(xr, body, tail, mask);
        // logf from the C library: a C++ inline wrapper instantiated here would be AVX2 code.
        const __m256 log_sum = _mm256_set1_ps(logf(sum_exp(xr, body, tail, mask, m, nullptr)));
        const __m256 vm = _mm256_set1_ps(m);
        for (int64_t c = 0; c < body; c += 8)
            _mm256_storeu_ps(yr + c,
                             _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + c), vm), log_sum));
        if (tail)
            _mm256_maskstore_ps(
                yr + body, mask,
                _mm256_sub_ps(_mm256_sub_ps(_mm256_maskload_ps(xr + body, mask), vm), log_sum));
    }
}

}  // namespace

void add_ops_softmax_avx2(KernelTable& t) {
    t.ops.softmax_rows = softmax_rows;
    t.ops.log_softmax_rows = log_softmax_rows;
}

}  // namespace pk::kernels
