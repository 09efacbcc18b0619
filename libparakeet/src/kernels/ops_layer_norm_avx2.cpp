// AVX2/FMA layer norm: 16 partial sums per pass (two accumulators), combined in a fixed order,
// so a row's result depends only on the row.
#include <immintrin.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx2.h"

namespace pk::kernels {
namespace {

void layer_norm_rows(const float* x, int64_t rows, int64_t cols, const float* weight,
                     const float* bias, float eps, float* y) {
    const int64_t tail = cols % 8;
    const int64_t body = cols - tail;
    const __m256i mask = vec::tail_mask(tail);
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;

        __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
        int64_t c = 0;
        for (; c + 16 <= body; c += 16) {
            s0 = _mm256_add_ps(s0, _mm256_loadu_ps(xr + c));
            s1 = _mm256_add_ps(s1, _mm256_loadu_ps(xr + c + 8));
        }
        if (c < body) s0 = _mm256_add_ps(s0, _mm256_loadu_ps(xr + c));
        if (tail) s1 = _mm256_add_ps(s1, _mm256_maskload_ps(xr + body, mask));
        const float mean = vec::hsum(_mm256_add_ps(s0, s1)) / static_cast<float>(cols);
        const __m256 vmean = _mm256_set1_ps(mean);

        s0 = _mm256_setzero_ps();
        s1 = _mm256_setzero_ps();
        for (c = 0; c + 16 <= body; c += 16) {
            const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(xr + c), vmean);
            const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(xr + c + 8), vmean);
            s0 = _mm256_fmadd_ps(d0, d0, s0);
            s1 = _mm256_fmadd_ps(d1, d1, s1);
        }
        if (c < body) {
            const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(xr + c), vmean);
            s0 = _mm256_fmadd_ps(d, d, s0);
        }
        if (tail) {
            // Masked-off lanes load 0 and would contribute mean^2: clear them.
            const __m256 d = _mm256_and_ps(
                _mm256_sub_ps(_mm256_maskload_ps(xr + body, mask), vmean),
                _mm256_castsi256_ps(mask));
            s1 = _mm256_fmadd_ps(d, d, s1);
        }
        const float var = vec::hsum(_mm256_add_ps(s0, s1)) / static_cast<float>(cols);
        const float rstd =
            1.0f / _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(var + eps)));
        const __m256 vrstd = _mm256_set1_ps(rstd);

        for (c = 0; c < body; c += 8) {
            const __m256 n = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + c), vmean), vrstd);
            _mm256_storeu_ps(yr + c, _mm256_fmadd_ps(n, _mm256_loadu_ps(weight + c),
                                                     _mm256_loadu_ps(bias + c)));
        }
        if (tail) {
            const __m256 n = _mm256_mul_ps(
                _mm256_sub_ps(_mm256_maskload_ps(xr + body, mask), vmean), vrstd);
            _mm256_maskstore_ps(yr + body, mask,
                                _mm256_fmadd_ps(n, _mm256_maskload_ps(weight + body, mask),
                                                _mm256_maskload_ps(bias + body, mask)));
        }
    }
}

}  // namespace

void add_ops_layer_norm_avx2(KernelTable& t) {
    t.ops.layer_norm_rows = layer_norm_rows;
}

}  // namespace pk::kernels
