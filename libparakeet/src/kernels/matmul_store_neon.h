// The last steps of the AArch64 matmul tiles (matmul_kernels_neon.cpp, the quad-layout Q8_0
// kernels of matmul_q8_quads_neon.h, matmul_kquant_dotprod.cpp, the SMMLA kernels of the i8mm
// level): per block, exact integer sums scaled into float accumulators, and one row of 16
// outputs written out. Included only by
// *_neon.cpp / *_dotprod.cpp / *_i8mm.cpp files; `static` so that no copy compiled for a higher
// level can be picked by the linker elsewhere.
#pragma once

#include <arm_neon.h>

#include "kernels/matmul_layout.h"

namespace pk::kernels::matmul_detail {

// c = acc (+ bias) on a K slice's first pass, c += acc on later ones, for 4 * NQ outputs
// (16 by default).
template <int NQ = 4>
static inline void store_row_neon(float* c, const float32x4_t acc[NQ], const float* bias, bool accumulate) {
    for (int q = 0; q < NQ; ++q) {
        float32x4_t v = acc[q];
        if (accumulate) {
            v = vaddq_f32(vld1q_f32(c + 4 * q), v);
        } else if (bias) {
            v = vaddq_f32(v, vld1q_f32(bias + 4 * q));
        }
        vst1q_f32(c + 4 * q, v);
    }
}

// acc = fma(float(isum), w_scale * x_scale, acc) for 4 * NQ outputs: the Q8_0 blocks' float
// step, in the order of the x86 kernels' scale_add.
template <int NQ = 4>
static inline void q8_scale_add_neon(float32x4_t acc[NQ], const int32x4_t isum[NQ], const float* w_scale,
                                     float x_scale) {
    for (int q = 0; q < NQ; ++q) {
        acc[q] = vfmaq_f32(acc[q], vcvtq_f32_s32(isum[q]), vmulq_n_f32(vld1q_f32(w_scale + 4 * q), x_scale));
    }
}

// acc = fma(s * float(isum), dx, acc); acc = fma(-o, corr, acc) for 8 outputs: the unsigned-form
// units' float step per group, in the portable tile's order (matmul_kquant.cpp).
static inline void kq_scale_add_neon(float32x4_t acc[2], const int32x4_t isum[2], const float* s, const float* o,
                                     float dx, float corr) {
    for (int g = 0; g < 2; ++g) {
        const float32x4_t v = vmulq_f32(vld1q_f32(s + 4 * g), vcvtq_f32_s32(isum[g]));
        acc[g] = vfmaq_n_f32(acc[g], v, dx);
        acc[g] = vfmsq_n_f32(acc[g], vld1q_f32(o + 4 * g), corr);
    }
}

}  // namespace pk::kernels::matmul_detail
