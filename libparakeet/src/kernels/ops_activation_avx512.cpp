// AVX-512 SiLU, sigmoid, GLU and GELU: the exp of ops_vec_avx512.h and a true division; the tail is one
// masked step of the same loop, so every element goes through identical code.
#include <immintrin.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx512.h"

namespace pk::kernels {
namespace {

// y[i] = f(x[i]) for i < n, f on 16 lanes at a time, the tail masked.
template <typename F>
void map(const float* x, int64_t n, float* y, F f) {
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = vec512::first_lanes(n - i);
        _mm512_mask_storeu_ps(y + i, k, f(_mm512_maskz_loadu_ps(k, x + i)));
    }
}

void silu(const float* x, int64_t n, float* y) {
    map(x, n, y, [](__m512 v) { return vec512::times_sigmoid(v, v); });
}

// 1 / (1 + exp(-x)): times_sigmoid's division with 1 as the numerator.
void sigmoid(const float* x, int64_t n, float* y) {
    map(x, n, y, [](__m512 v) { return vec512::times_sigmoid(_mm512_set1_ps(1.0f), v); });
}

void gelu_erf(const float* x, int64_t n, float* y) { map(x, n, y, vec512::gelu_erf); }

void glu_rows(const float* x, int64_t rows, int64_t channels, float* y) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* a = x + r * 2 * channels;
        const float* g = a + channels;
        float* yr = y + r * channels;
        for (int64_t c = 0; c < channels; c += 16) {
            const __mmask16 k = vec512::first_lanes(channels - c);
            _mm512_mask_storeu_ps(yr + c, k,
                                  vec512::times_sigmoid(_mm512_maskz_loadu_ps(k, a + c),
                                                        _mm512_maskz_loadu_ps(k, g + c)));
        }
    }
}

}  // namespace

void add_ops_activation_avx512(KernelTable& t) {
    t.ops.silu = silu;
    t.ops.sigmoid = sigmoid;
    t.ops.gelu_erf = gelu_erf;
    t.ops.glu_rows = glu_rows;
}

}  // namespace pk::kernels
