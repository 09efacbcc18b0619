// Advanced SIMD softmax and log-softmax: vector max, vector exp (ops_vec_neon.h) and 4 partial
// sums combined by one horizontal add, so a row's result depends only on the row.
#include <arm_neon.h>
#include <math.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_neon.h"

namespace pk::kernels {
namespace {

float row_max(const float* x, int64_t body, int64_t tail) {
    float32x4_t m = vdupq_n_f32(-INFINITY);
    for (int64_t c = 0; c < body; c += 4) m = vmaxq_f32(m, vld1q_f32(x + c));
    if (tail) m = vmaxq_f32(m, neon::load_tail(x + body, tail, -INFINITY));
    return vmaxvq_f32(m);
}

// Sum of exp(x - m) over the row; when y is not null the exponentials are stored there.
float sum_exp(const float* x, int64_t body, int64_t tail, float m, float* y) {
    const float32x4_t vm = vdupq_n_f32(m);
    float32x4_t s = vdupq_n_f32(0.0f);
    for (int64_t c = 0; c < body; c += 4) {
        const float32x4_t e = neon::exp(vsubq_f32(vld1q_f32(x + c), vm));
        if (y) vst1q_f32(y + c, e);
        s = vaddq_f32(s, e);
    }
    if (tail) {
        // The missing lanes are -inf, whose exp is 0.
        const float32x4_t e = neon::exp(vsubq_f32(neon::load_tail(x + body, tail, -INFINITY), vm));
        if (y) neon::store_tail(y + body, tail, e);
        s = vaddq_f32(s, e);
    }
    return vaddvq_f32(s);
}

void softmax_rows(const float* x, int64_t rows, int64_t cols, float* y) {
    const int64_t tail = cols % 4;
    const int64_t body = cols - tail;
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const float m = row_max(xr, body, tail);
        const float32x4_t inv = vdupq_n_f32(1.0f / sum_exp(xr, body, tail, m, yr));
        for (int64_t c = 0; c < body; c += 4) vst1q_f32(yr + c, vmulq_f32(vld1q_f32(yr + c), inv));
        if (tail) neon::store_tail(yr + body, tail, vmulq_f32(neon::load_tail(yr + body, tail, 0.0f), inv));
    }
}

void log_softmax_rows(const float* x, int64_t rows, int64_t cols, float* y) {
    const int64_t tail = cols % 4;
    const int64_t body = cols - tail;
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const float m = row_max(xr, body, tail);
        // logf from the C library: a C++ inline wrapper instantiated here could be the copy
        // the linker keeps.
        const float32x4_t log_sum = vdupq_n_f32(logf(sum_exp(xr, body, tail, m, nullptr)));
        const float32x4_t vm = vdupq_n_f32(m);
        for (int64_t c = 0; c < body; c += 4)
            vst1q_f32(yr + c, vsubq_f32(vsubq_f32(vld1q_f32(xr + c), vm), log_sum));
        if (tail)
            neon::store_tail(yr + body, tail,
                             vsubq_f32(vsubq_f32(neon::load_tail(xr + body, tail, 0.0f), vm), log_sum));
    }
}

}  // namespace

void add_ops_softmax_neon(KernelTable& t) {
    t.ops.softmax_rows = softmax_rows;
    t.ops.log_softmax_rows = log_softmax_rows;
}

}  // namespace pk::kernels
