// AVX2/FMA SiLU, sigmoid, GLU and GELU: the vector exp of ops_vec_avx2.h and a true division. Tails use
// masked loads and stores, so every element goes through identical code.
#include <immintrin.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx2.h"

namespace pk::kernels {
namespace {

// y[i] = f(x[i]) for i < n, f on 8 lanes at a time, the tail masked.
template <typename F>
void map(const float* x, int64_t n, float* y, F f) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i mask = vec::tail_mask(n - i);
        _mm256_maskstore_ps(y + i, mask, f(_mm256_maskload_ps(x + i, mask)));
    }
}

void silu(const float* x, int64_t n, float* y) {
    map(x, n, y, [](__m256 v) { return vec::times_sigmoid(v, v); });
}

// 1 / (1 + exp(-x)): times_sigmoid's division with 1 as the numerator.
void sigmoid(const float* x, int64_t n, float* y) {
    map(x, n, y, [](__m256 v) { return vec::times_sigmoid(_mm256_set1_ps(1.0f), v); });
}

void gelu_erf(const float* x, int64_t n, float* y) { map(x, n, y, vec::gelu_erf); }

void glu_rows(const float* x, int64_t rows, int64_t channels, float* y) {
    const int64_t tail = channels % 8;
    const int64_t body = channels - tail;
    const __m256i mask = vec::tail_mask(tail);
    for (int64_t r = 0; r < rows; ++r) {
        const float* a = x + r * 2 * channels;
        const float* g = a + channels;
        float* yr = y + r * channels;
        for (int64_t c = 0; c < body; c += 8)
            _mm256_storeu_ps(yr + c,
                             vec::times_sigmoid(_mm256_loadu_ps(a + c), _mm256_loadu_ps(g + c)));
        if (tail)
            _mm256_maskstore_ps(yr + body, mask,
                                vec::times_sigmoid(_mm256_maskload_ps(a + body, mask),
                                                   _mm256_maskload_ps(g + body, mask)));
    }
}

}  // namespace

void add_ops_activation_avx2(KernelTable& t) {
    t.ops.silu = silu;
    t.ops.sigmoid = sigmoid;
    t.ops.gelu_erf = gelu_erf;
    t.ops.glu_rows = glu_rows;
}

}  // namespace pk::kernels
