// AVX2/FMA 3x3 convs of the subsampling stage (stride 2; the single-channel one also 1). Per
// output pixel, 32 channels at a time in four accumulators that start from the bias and take one
// fused multiply-add per in-bounds tap, taps in row-major order; a pixel's result depends only on
// the pixel.
#include <immintrin.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx2.h"

namespace pk::kernels {
namespace {

// conv3x3_output_size() of conv_subsampling.h, restated: an AVX2-compiled copy of that
// inline function could be the one the linker keeps for the portable code.
int64_t out_size(int64_t in, int64_t stride) { return in <= 0 ? 0 : (in - 1) / stride + 1; }

// Offsets of the in-bounds taps of output pixel (t, f): tap index 3 * i + j and the input
// pixel index s * F + u it reads. At most 9.
struct Taps {
    int n = 0;
    int64_t tap[9];
    int64_t pixel[9];
};

Taps taps_of(int64_t t, int64_t f, int64_t T, int64_t F, int64_t stride) {
    Taps k;
    for (int64_t i = 0; i < 3; ++i) {
        const int64_t s = stride * t + i - 1;
        if (s < 0 || s >= T) continue;
        for (int64_t j = 0; j < 3; ++j) {
            const int64_t u = stride * f + j - 1;
            if (u < 0 || u >= F) continue;
            k.tap[k.n] = 3 * i + j;
            k.pixel[k.n] = s * F + u;
            ++k.n;
        }
    }
    return k;
}

__m256 relu_if(__m256 v, bool relu) { return relu ? _mm256_max_ps(v, _mm256_setzero_ps()) : v; }

void conv2d_3x3_single_channel_rows(const float* x, int64_t T, int64_t F, int stride, const float* w,
                                    const float* bias, int64_t C, bool relu, int64_t t_begin, int64_t t_end,
                                    float* y) {
    const int64_t F1 = out_size(F, stride);
    const int64_t tail = C % 8;
    const int64_t body = C - tail;
    const __m256i mask = vec::tail_mask(tail);
    for (int64_t t = t_begin; t < t_end; ++t) {
        for (int64_t f = 0; f < F1; ++f) {
            const Taps k = taps_of(t, f, T, F, stride);
            __m256 xv[9];
            for (int n = 0; n < k.n; ++n) xv[n] = _mm256_broadcast_ss(x + k.pixel[n]);
            float* yp = y + (t * F1 + f) * C;
            int64_t c = 0;
            for (; c + 32 <= body; c += 32) {
                __m256 a0 = _mm256_loadu_ps(bias + c), a1 = _mm256_loadu_ps(bias + c + 8);
                __m256 a2 = _mm256_loadu_ps(bias + c + 16), a3 = _mm256_loadu_ps(bias + c + 24);
                for (int n = 0; n < k.n; ++n) {
                    const float* wt = w + k.tap[n] * C + c;
                    a0 = _mm256_fmadd_ps(xv[n], _mm256_loadu_ps(wt), a0);
                    a1 = _mm256_fmadd_ps(xv[n], _mm256_loadu_ps(wt + 8), a1);
                    a2 = _mm256_fmadd_ps(xv[n], _mm256_loadu_ps(wt + 16), a2);
                    a3 = _mm256_fmadd_ps(xv[n], _mm256_loadu_ps(wt + 24), a3);
                }
                _mm256_storeu_ps(yp + c, relu_if(a0, relu));
                _mm256_storeu_ps(yp + c + 8, relu_if(a1, relu));
                _mm256_storeu_ps(yp + c + 16, relu_if(a2, relu));
                _mm256_storeu_ps(yp + c + 24, relu_if(a3, relu));
            }
            for (; c < body; c += 8) {
                __m256 a = _mm256_loadu_ps(bias + c);
                for (int n = 0; n < k.n; ++n)
                    a = _mm256_fmadd_ps(xv[n], _mm256_loadu_ps(w + k.tap[n] * C + c), a);
                _mm256_storeu_ps(yp + c, relu_if(a, relu));
            }
            if (tail) {
                __m256 a = _mm256_maskload_ps(bias + body, mask);
                for (int n = 0; n < k.n; ++n)
                    a = _mm256_fmadd_ps(xv[n], _mm256_maskload_ps(w + k.tap[n] * C + body, mask),
                                        a);
                _mm256_maskstore_ps(yp + body, mask, relu_if(a, relu));
            }
        }
    }
}

void depthwise_conv2d_3x3_s2_rows(const float* x, int64_t T, int64_t F, int64_t C,
                                  const float* w, const float* bias, int64_t t_begin,
                                  int64_t t_end, float* y) {
    const int64_t F1 = out_size(F, 2);
    const int64_t tail = C % 8;
    const int64_t body = C - tail;
    const __m256i mask = vec::tail_mask(tail);
    for (int64_t t = t_begin; t < t_end; ++t) {
        for (int64_t f = 0; f < F1; ++f) {
            const Taps k = taps_of(t, f, T, F, 2);
            float* yp = y + (t * F1 + f) * C;
            int64_t c = 0;
            for (; c + 32 <= body; c += 32) {
                __m256 a0 = _mm256_loadu_ps(bias + c), a1 = _mm256_loadu_ps(bias + c + 8);
                __m256 a2 = _mm256_loadu_ps(bias + c + 16), a3 = _mm256_loadu_ps(bias + c + 24);
                for (int n = 0; n < k.n; ++n) {
                    const float* wt = w + k.tap[n] * C + c;
                    const float* xp = x + k.pixel[n] * C + c;
                    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(xp), _mm256_loadu_ps(wt), a0);
                    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(xp + 8), _mm256_loadu_ps(wt + 8), a1);
                    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(xp + 16), _mm256_loadu_ps(wt + 16), a2);
                    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(xp + 24), _mm256_loadu_ps(wt + 24), a3);
                }
                _mm256_storeu_ps(yp + c, a0);
                _mm256_storeu_ps(yp + c + 8, a1);
                _mm256_storeu_ps(yp + c + 16, a2);
                _mm256_storeu_ps(yp + c + 24, a3);
            }
            for (; c < body; c += 8) {
                __m256 a = _mm256_loadu_ps(bias + c);
                for (int n = 0; n < k.n; ++n)
                    a = _mm256_fmadd_ps(_mm256_loadu_ps(x + k.pixel[n] * C + c),
                                        _mm256_loadu_ps(w + k.tap[n] * C + c), a);
                _mm256_storeu_ps(yp + c, a);
            }
            if (tail) {
                __m256 a = _mm256_maskload_ps(bias + body, mask);
                for (int n = 0; n < k.n; ++n)
                    a = _mm256_fmadd_ps(_mm256_maskload_ps(x + k.pixel[n] * C + body, mask),
                                        _mm256_maskload_ps(w + k.tap[n] * C + body, mask), a);
                _mm256_maskstore_ps(yp + body, mask, a);
            }
        }
    }
}

}  // namespace

void add_conv_subsampling_avx2(KernelTable& t) {
    t.conv.conv2d_3x3_single_channel_rows = conv2d_3x3_single_channel_rows;
    t.conv.depthwise_conv2d_3x3_s2_rows = depthwise_conv2d_3x3_s2_rows;
}

}  // namespace pk::kernels
