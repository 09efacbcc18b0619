// Advanced SIMD building blocks shared by the AArch64 row-op kernels. Include ONLY from
// *_neon.cpp / *_dotprod.cpp / *_i8mm.cpp files. Everything here is `static inline`, so no
// copy of a helper compiled for a higher level can be picked by the linker for another file.
// The exp is the AVX2 one's algorithm with the shared constants of exp_poly.h.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "kernels/exp_poly.h"

namespace pk::kernels::neon {

// The last n < 4 floats of a row as a vector, the missing lanes `fill`; rows end through the
// same vector code as their body, so an element's value never depends on where a run ends.
static inline float32x4_t load_tail(const float* p, int64_t n, float fill) {
    float buf[4] = {fill, fill, fill, fill};
    std::memcpy(buf, p, static_cast<size_t>(n) * sizeof(float));
    return vld1q_f32(buf);
}

static inline void store_tail(float* p, int64_t n, float32x4_t v) {
    float buf[4];
    vst1q_f32(buf, v);
    std::memcpy(p, buf, static_cast<size_t>(n) * sizeof(float));
}

// exp(x) for 4 lanes, within about 2 ulp of expf for x in [-87.3, 88]: below -87.3 the result
// is 0, above 88 it saturates at exp(88) (see ops_vec_avx2.h). Cody-Waite reduction
// x = n*ln2 + r, a degree-7 polynomial for exp(r), and 2^n put into the exponent bits.
static inline float32x4_t exp(float32x4_t x) {
    const float32x4_t lo = vdupq_n_f32(-87.33654f);
    const uint32x4_t underflow = vcltq_f32(x, lo);
    x = vminq_f32(vmaxq_f32(x, lo), vdupq_n_f32(88.0f));

    const float32x4_t n = vrndnq_f32(vmulq_n_f32(x, exp_poly::kLog2e));
    float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(exp_poly::kLn2Hi));
    r = vfmsq_f32(r, n, vdupq_n_f32(exp_poly::kLn2Lo));

    float32x4_t p = vdupq_n_f32(exp_poly::kC0);
    p = vfmaq_f32(vdupq_n_f32(exp_poly::kC1), p, r);
    p = vfmaq_f32(vdupq_n_f32(exp_poly::kC2), p, r);
    p = vfmaq_f32(vdupq_n_f32(exp_poly::kC3), p, r);
    p = vfmaq_f32(vdupq_n_f32(exp_poly::kC4), p, r);
    p = vfmaq_f32(vdupq_n_f32(exp_poly::kC5), p, r);
    p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));

    const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23);
    const float32x4_t v = vmulq_f32(p, vreinterpretq_f32_s32(e));
    return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(v), underflow));
}

// x * sigmoid(g) = x / (1 + exp(-g)), the core of SiLU (g = x) and GLU.
static inline float32x4_t times_sigmoid(float32x4_t x, float32x4_t g) {
    return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), exp(vnegq_f32(g))));
}

}  // namespace pk::kernels::neon
