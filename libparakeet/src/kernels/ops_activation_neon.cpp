// Advanced SIMD SiLU and GLU: the vector exp of ops_vec_neon.h and a true division. Tails go
// through the same vector code (padded loads and partial stores).
#include <arm_neon.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_neon.h"

namespace pk::kernels {
namespace {

void silu(const float* x, int64_t n, float* y) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        vst1q_f32(y + i, neon::times_sigmoid(v, v));
    }
    if (i < n) {
        const float32x4_t v = neon::load_tail(x + i, n - i, 0.0f);
        neon::store_tail(y + i, n - i, neon::times_sigmoid(v, v));
    }
}

void glu_rows(const float* x, int64_t rows, int64_t channels, float* y) {
    const int64_t tail = channels % 4;
    const int64_t body = channels - tail;
    for (int64_t r = 0; r < rows; ++r) {
        const float* a = x + r * 2 * channels;
        const float* g = a + channels;
        float* yr = y + r * channels;
        for (int64_t c = 0; c < body; c += 4)
            vst1q_f32(yr + c, neon::times_sigmoid(vld1q_f32(a + c), vld1q_f32(g + c)));
        if (tail)
            neon::store_tail(yr + body, tail,
                             neon::times_sigmoid(neon::load_tail(a + body, tail, 0.0f),
                                                 neon::load_tail(g + body, tail, 0.0f)));
    }
}

}  // namespace

void add_ops_activation_neon(KernelTable& t) {
    t.ops.silu = silu;
    t.ops.glu_rows = glu_rows;
}

}  // namespace pk::kernels
