// AVX2/FMA depthwise 1-D conv: per frame, 32 channels at a time in four accumulators that
// start from the bias and take one fused multiply-add per tap, taps in order.
#include <immintrin.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx2.h"

namespace pk::kernels {
namespace {

void depthwise_conv1d_rows(const float* x, int64_t T, int64_t C, const float* w,
                           int64_t kernel, const float* bias, int64_t t_begin, int64_t t_end,
                           float* y) {
    const int64_t pad = (kernel - 1) / 2;
    const int64_t tail = C % 8;
    const int64_t body = C - tail;
    const __m256i mask = vec::tail_mask(tail);
    for (int64_t t = t_begin; t < t_end; ++t) {
        // Taps [j0, j1) read frames inside [0, T); the others hit the zero padding.
        const int64_t j0 = pad - t > 0 ? pad - t : 0;
        const int64_t j1 = T - t + pad < kernel ? T - t + pad : kernel;
        float* yr = y + t * C;
        int64_t c = 0;
        for (; c + 32 <= body; c += 32) {
            __m256 a0, a1, a2, a3;
            if (bias) {
                a0 = _mm256_loadu_ps(bias + c);
                a1 = _mm256_loadu_ps(bias + c + 8);
                a2 = _mm256_loadu_ps(bias + c + 16);
                a3 = _mm256_loadu_ps(bias + c + 24);
            } else {
                a0 = a1 = a2 = a3 = _mm256_setzero_ps();
            }
            for (int64_t j = j0; j < j1; ++j) {
                const float* xs = x + (t + j - pad) * C + c;
                const float* wj = w + j * C + c;
                a0 = _mm256_fmadd_ps(_mm256_loadu_ps(wj), _mm256_loadu_ps(xs), a0);
                a1 = _mm256_fmadd_ps(_mm256_loadu_ps(wj + 8), _mm256_loadu_ps(xs + 8), a1);
                a2 = _mm256_fmadd_ps(_mm256_loadu_ps(wj + 16), _mm256_loadu_ps(xs + 16), a2);
                a3 = _mm256_fmadd_ps(_mm256_loadu_ps(wj + 24), _mm256_loadu_ps(xs + 24), a3);
            }
            _mm256_storeu_ps(yr + c, a0);
            _mm256_storeu_ps(yr + c + 8, a1);
            _mm256_storeu_ps(yr + c + 16, a2);
            _mm256_storeu_ps(yr + c + 24, a3);
        }
        for (; c < body; c += 8) {
            __m256 a = bias ? _mm256_loadu_ps(bias + c) : _mm256_setzero_ps();
            for (int64_t j = j0; j < j1; ++j)
                a = _mm256_fmadd_ps(_mm256_loadu_ps(w + j * C + c),
                                    _mm256_loadu_ps(x + (t + j - pad) * C + c), a);
            _mm256_storeu_ps(yr + c, a);
        }
        if (tail) {
            __m256 a = bias ? _mm256_maskload_ps(bias + body, mask) : _mm256_setzero_ps();
            for (int64_t j = j0; j < j1; ++j)
                a = _mm256_fmadd_ps(_mm256_maskload_ps(w + j * C + body, mask),
                                    _mm256_maskload_ps(x + (t + j - pad) * C + body, mask), a);
            _mm256_maskstore_ps(yr + body, mask, a);
        }
    }
}

}  // namespace

void add_conv_depthwise1d_avx2(KernelTable& t) {
    t.conv.depthwise_conv1d_rows = depthwise_conv1d_rows;
}

}  // namespace pk::kernels
