// Advanced SIMD layer norm: 8 partial sums per pass (two accumulators), combined in a fixed
// order, so a row's result depends only on the row.
#include <arm_neon.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_neon.h"

namespace pk::kernels {
namespace {

void layer_norm_rows(const float* x, int64_t rows, int64_t cols, const float* weight,
                     const float* bias, float eps, float* y) {
    const int64_t tail = cols % 4;
    const int64_t body = cols - tail;
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;

        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = vdupq_n_f32(0.0f);
        int64_t c = 0;
        for (; c + 8 <= body; c += 8) {
            s0 = vaddq_f32(s0, vld1q_f32(xr + c));
            s1 = vaddq_f32(s1, vld1q_f32(xr + c + 4));
        }
        if (c < body) s0 = vaddq_f32(s0, vld1q_f32(xr + c));
        if (tail) s1 = vaddq_f32(s1, neon::load_tail(xr + body, tail, 0.0f));
        const float mean = vaddvq_f32(vaddq_f32(s0, s1)) / static_cast<float>(cols);
        const float32x4_t vmean = vdupq_n_f32(mean);

        s0 = vdupq_n_f32(0.0f);
        s1 = vdupq_n_f32(0.0f);
        for (c = 0; c + 8 <= body; c += 8) {
            const float32x4_t d0 = vsubq_f32(vld1q_f32(xr + c), vmean);
            const float32x4_t d1 = vsubq_f32(vld1q_f32(xr + c + 4), vmean);
            s0 = vfmaq_f32(s0, d0, d0);
            s1 = vfmaq_f32(s1, d1, d1);
        }
        if (c < body) {
            const float32x4_t d = vsubq_f32(vld1q_f32(xr + c), vmean);
            s0 = vfmaq_f32(s0, d, d);
        }
        if (tail) {
            // The missing lanes are the mean itself, so they add nothing.
            const float32x4_t d = vsubq_f32(neon::load_tail(xr + body, tail, mean), vmean);
            s1 = vfmaq_f32(s1, d, d);
        }
        const float var = vaddvq_f32(vaddq_f32(s0, s1)) / static_cast<float>(cols);
        const float rstd = 1.0f / vgetq_lane_f32(vsqrtq_f32(vdupq_n_f32(var + eps)), 0);
        const float32x4_t vrstd = vdupq_n_f32(rstd);

        for (c = 0; c < body; c += 4) {
            const float32x4_t n = vmulq_f32(vsubq_f32(vld1q_f32(xr + c), vmean), vrstd);
            vst1q_f32(yr + c, vfmaq_f32(vld1q_f32(bias + c), n, vld1q_f32(weight + c)));
        }
        if (tail) {
            const float32x4_t n = vmulq_f32(vsubq_f32(neon::load_tail(xr + body, tail, 0.0f), vmean), vrstd);
            neon::store_tail(yr + body, tail,
                             vfmaq_f32(neon::load_tail(bias + body, tail, 0.0f), n,
                                       neon::load_tail(weight + body, tail, 0.0f)));
        }
    }
}

}  // namespace

void add_ops_layer_norm_neon(KernelTable& t) { t.ops.layer_norm_rows = layer_norm_rows; }

}  // namespace pk::kernels
