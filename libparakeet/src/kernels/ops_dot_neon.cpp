// Advanced SIMD dot product: four 4-lane FMA accumulators (the FMA latency hidden), summed in
// a fixed order, then a scalar tail.
#include <arm_neon.h>

#include "kernels/kernel_table.h"

namespace pk::kernels {
namespace {

float dot_neon(const float* a, const float* b, int64_t n) {
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
        s1 = vfmaq_f32(s1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
        s2 = vfmaq_f32(s2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
        s3 = vfmaq_f32(s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
    }
    for (; i + 4 <= n; i += 4) s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
    float r = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
    for (; i < n; ++i) r += a[i] * b[i];
    return r;
}

}  // namespace

void add_ops_dot_neon(KernelTable& t) { t.dot.dot = dot_neon; }

}  // namespace pk::kernels
