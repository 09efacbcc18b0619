// The unsigned-form tile (K-quants and the legacy 4/5-bit types) with SDOT at the dotprod
// level: the decoded units' u < 64 are the same bytes read as signed, so SDOT multiplies them by
// the signed activations directly, 4 outputs x 4 k per instruction, exactly in int32. The float
// operations are the portable tile's (matmul_kquant.cpp), in the same order, so the bits are the
// same as at every other level.
#include <arm_neon.h>

#include <cstdint>

#include "kernels/kernel_table.h"
#include "kernels/matmul_kquant_neon.h"
#include "kernels/matmul_store_neon.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

// Outputs [8 h, 8 h + 8) of R <= 4 rows: per unit, each quad's two weight vectors are loaded
// once for all rows, and the rows' integer sums (8 vectors), float accumulators (8) and
// activations (8) stay in registers. kHalves: the weights' groups are 16 k (Q6_K), so the
// float step runs after quads 0..3 and after 4..7; otherwise once per unit on all 8 quads'
// sums (exact integers: the portable tile's isum[0] + isum[1]).
struct Sdot {
    template <bool kHalves, int R>
    static void half(int64_t h, int64_t nunits, const int8_t* a, const float* a_scale, const float* a_corr,
                     const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
        float32x4_t acc[R][2];
        for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = vdupq_n_f32(0.0f);
        for (int64_t b = 0; b < nunits; ++b) {
            const neon_kq::UnitHalf w = neon_kq::unit_half(units, b, h);
            const float *s = w.s, *o = w.o;
            const int8_t* u = w.u + 32 * h;
            const int64_t row = b * kRowsKq;
            int8x16_t x[R][2];
            int32x4_t isum[R][2];
            for (int r = 0; r < R; ++r) {
                x[r][0] = vld1q_s8(a + (row + r) * kQ8Block);
                x[r][1] = vld1q_s8(a + (row + r) * kQ8Block + 16);
                isum[r][0] = isum[r][1] = vdupq_n_s32(0);
            }
#pragma GCC unroll 8
            for (int t = 0; t < kQ8QuadsPerBlock; ++t) {
                const int8x16_t w0 = vld1q_s8(u + 64 * t), w1 = vld1q_s8(u + 64 * t + 16);
#pragma GCC unroll 4
                for (int r = 0; r < R; ++r) {
                    switch (t % 4) {
                        case 0: isum[r][0] = vdotq_laneq_s32(isum[r][0], w0, x[r][t / 4], 0);
                                isum[r][1] = vdotq_laneq_s32(isum[r][1], w1, x[r][t / 4], 0); break;
                        case 1: isum[r][0] = vdotq_laneq_s32(isum[r][0], w0, x[r][t / 4], 1);
                                isum[r][1] = vdotq_laneq_s32(isum[r][1], w1, x[r][t / 4], 1); break;
                        case 2: isum[r][0] = vdotq_laneq_s32(isum[r][0], w0, x[r][t / 4], 2);
                                isum[r][1] = vdotq_laneq_s32(isum[r][1], w1, x[r][t / 4], 2); break;
                        default: isum[r][0] = vdotq_laneq_s32(isum[r][0], w0, x[r][t / 4], 3);
                                 isum[r][1] = vdotq_laneq_s32(isum[r][1], w1, x[r][t / 4], 3); break;
                    }
                }
                if (kHalves && t == 3) {
                    for (int r = 0; r < R; ++r) {
                        kq_scale_add_neon(acc[r], isum[r], s, o, a_scale[row + r], a_corr[(row + r) * kKqCorrPerBlock]);
                        isum[r][0] = isum[r][1] = vdupq_n_s32(0);
                    }
                }
            }
            for (int r = 0; r < R; ++r) {
                const float* corr = a_corr + (row + r) * kKqCorrPerBlock;
                if (kHalves) {
                    kq_scale_add_neon(acc[r], isum[r], s + kPanel, o + kPanel, a_scale[row + r], corr[1]);
                } else {
                    kq_scale_add_neon(acc[r], isum[r], s, o, a_scale[row + r], corr[2]);
                }
            }
        }
        for (int r = 0; r < R; ++r) store_row_neon<2>(c + r * ldc + 8 * h, acc[r], bias ? bias + 8 * h : nullptr, accumulate);
    }
};

}  // namespace

// The decoder and the activation quantiser stay portable; the tile keeps kRowsKq rows.
void add_matmul_kquant_dotprod(KernelTable& t) { t.matmul.tile_kq = neon_kq::tile<Sdot>; }

}  // namespace pk::kernels
