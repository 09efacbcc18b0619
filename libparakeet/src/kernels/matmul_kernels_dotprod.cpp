// Q8_0 micro-kernels of the dotprod level (Armv8.2 FEAT_DotProd): the quad
// layout of matmul_layout.h, as at the avx512 level, with SDOT. SDOT multiplies 4 signed by 4
// signed bytes per 32-bit lane and adds them to the lane, exactly in int32. The packed weights
// are u = q + 128 (the unsigned side VNNI needs); u XOR 0x80 is q again as a signed byte, so
// the sums start at 0 and the activations' correction term is not needed. One vector of
// weights is 4 outputs x 4 k and one lane of the activation vector 4 k of one row: a block of
// 32 k costs 32 SDOT per row for 16 outputs. The float side is matmul_q8_quads_neon.h's.
#include <arm_neon.h>

#include <cstdint>

#include "kernels/kernel_table.h"
#include "kernels/matmul_q8_quads_neon.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

struct Sdot {
    template <int L, int NG>
    static void block(int32x4_t* isum, const uint8x16_t* w, int8x16_t x) {
        const uint8x16_t sign = vdupq_n_u8(0x80);
        for (int g = 0; g < NG; ++g) {
            isum[g] = vdotq_laneq_s32(isum[g], vreinterpretq_s8_u8(veorq_u8(w[g], sign)), x, L);
        }
    }
};

void tile_q8_sdot(int64_t rows, int64_t nblocks, const int8_t* a, const float* a_scale, const int32_t*,
                  const uint8_t* b, float* c, int64_t ldc, const float* bias, bool accumulate) {
    neon_q8::tile<Sdot>(rows, nblocks, a, a_scale, b, c, ldc, bias, accumulate);
}

void matvec_q8_sdot(const int8_t* xq, const float* x_scale, const int32_t*, int64_t nblocks,
                    const uint8_t* panel, float* out) {
    neon_q8::matvec<Sdot>(xq, x_scale, nblocks, panel, out);
}

// One block of 32 activations: the portable quantiser's scale and rounding (IEEE quotients,
// round to nearest even, clamp to +-127), stored as int8 with the correction of the quad
// layout (-128 * the block's sum, which the SDOT and SMMLA kernels do not need; the layout's
// contract keeps it). The i8mm level inherits this quantiser.
inline void quantize_block(const float* x, int8_t* q, float* scale, int32_t* corr) {
    float32x4_t v[8];
    float32x4_t m = vdupq_n_f32(0.0f);
    for (int i = 0; i < 8; ++i) {
        v[i] = vld1q_f32(x + 4 * i);
        m = vmaxq_f32(m, vabsq_f32(v[i]));
    }
    const Q8Scale s = q8_scale(vmaxvq_f32(m));
    const float32x4_t lo = vdupq_n_f32(-127.0f), hi = vdupq_n_f32(127.0f);
    int32x4_t qi[8];
    int32x4_t sum = vdupq_n_s32(0);
    for (int i = 0; i < 8; ++i) {
        qi[i] = vcvtnq_s32_f32(vminq_f32(vmaxq_f32(vmulq_n_f32(v[i], s.id), lo), hi));
        sum = vaddq_s32(sum, qi[i]);
    }
    for (int i = 0; i < 8; i += 4) {
        const int16x8_t h0 = vcombine_s16(vmovn_s32(qi[i]), vmovn_s32(qi[i + 1]));
        const int16x8_t h1 = vcombine_s16(vmovn_s32(qi[i + 2]), vmovn_s32(qi[i + 3]));
        vst1q_s8(q + 4 * i, vcombine_s8(vmovn_s16(h0), vmovn_s16(h1)));
    }
    *scale = s.d;
    *corr = -kQ8QuadBias * vaddvq_s32(sum);
}

void quantize_q8_quads(const float* x, int64_t rows, int64_t ldx, int64_t nblocks, int64_t mr, int8_t* q,
                       float* scale, int32_t* corr) {
    // A lambda, not the function's address, so that the block quantiser is inlined.
    quantize_quad_panel(x, rows, ldx, nblocks, mr, q, scale, corr,
                        [](const float* xb, int8_t* qb, float* sb, int32_t* cb) { quantize_block(xb, qb, sb, cb); });
}

}  // namespace

void add_matmul_kernels_dotprod(KernelTable& t) {
    t.matmul.tile_q8_vnni = tile_q8_sdot;
    t.matmul.quantize_q8_vnni = quantize_q8_quads;
    t.matmul.matvec_q8_vnni = matvec_q8_sdot;
}

}  // namespace pk::kernels
