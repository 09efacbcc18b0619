// The unsigned-form tile (K-quants and the legacy 4/5-bit types) with SMMLA at the i8mm level.
// The decoder writes each unit's u < 64 (the same bytes read as signed) in the pair order of
// matmul_layout.h: the units are decoded once per panel K slice into the thread's buffer and
// read by every row panel, so that is where the reordering is paid; the activations are paired
// per tile (matmul_mmla_neon.h). The integer sums are exact and the float operations are the
// portable tile's in the same order, so the bits are the same as at every other level.
#include <arm_neon.h>

#include <cstdint>

#include "kernels/kernel_table.h"
#include "kernels/matmul_kquant_neon.h"
#include "kernels/matmul_mmla_neon.h"
#include "kernels/matmul_store_neon.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

uint8_t* unit_quants(uint8_t* units, int64_t i) {
    return units + static_cast<size_t>(i) * kKqUnitBytes + 4 * kPanel * sizeof(float);
}

// The portable units, then each oct of k in place: quads 2 m and 2 m + 1 (outputs 4 c .. 4 c + 3
// at 16 c in each) fill exactly the bytes of oct m, whose pairs 2 c and 2 c + 1 are the 32-bit
// interleavings of the two quads' vectors c.
void decode_kq_units_pairs(WeightType type, const uint8_t* panel, int64_t u0, int64_t n, uint8_t* units) {
    decode_kq_units_quads(type, panel, u0, n, units);
    for (int64_t i = 0; i < n; ++i) {
        uint8_t* u = unit_quants(units, i);
        for (int m = 0; m < 4; ++m) {
            uint8_t* g = u + 128 * m;
            uint32x4_t even[4], odd[4];
            for (int c = 0; c < 4; ++c) {
                even[c] = vreinterpretq_u32_u8(vld1q_u8(g + 16 * c));
                odd[c] = vreinterpretq_u32_u8(vld1q_u8(g + 64 + 16 * c));
            }
            for (int c = 0; c < 4; ++c) {
                vst1q_u8(g + 32 * c, vreinterpretq_u8_u32(vzip1q_u32(even[c], odd[c])));
                vst1q_u8(g + 32 * c + 16, vreinterpretq_u8_u32(vzip2q_u32(even[c], odd[c])));
            }
        }
    }
}

// Outputs [8 h, 8 h + 8) of R <= 4 rows (an odd R pairs its last row with the panel's zero
// row): per unit, the row pairs (8 vectors), their sums for 4 output pairs (8), the float
// accumulators (8) and one oct of weights (4) stay in registers. kHalves: the weights' groups
// are 16 k (Q6_K), so the float step runs after octs 0, 1 and after 2, 3; otherwise once per
// unit on the whole sums (the portable tile's isum[0] + isum[1], exact either way).
struct Smmla {
    template <bool kHalves, int R>
    static void half(int64_t h, int64_t nunits, const int8_t* a, const float* a_scale, const float* a_corr,
                     const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
        constexpr int P = (R + 1) / 2;
        float32x4_t acc[R][2];
        for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = vdupq_n_f32(0.0f);
        for (int64_t b = 0; b < nunits; ++b) {
            const neon_kq::UnitHalf w = neon_kq::unit_half(units, b, h);
            const float *s = w.s, *o = w.o;
            const int8_t* u = w.u + 64 * h;
            const int64_t row = b * kRowsKq;
            int8x16_t x[P][4];
            int32x4_t isum[P][4];
            for (int p = 0; p < P; ++p) {
                mmla::pair_rows(a + (row + 2 * p) * kQ8Block, x[p]);
                for (int q = 0; q < 4; ++q) isum[p][q] = vdupq_n_s32(0);
            }
            auto row_sums = [&](int r, int32x4_t rs[2]) {
                rs[0] = mmla::row_of(isum[r / 2][0], isum[r / 2][1], r % 2);
                rs[1] = mmla::row_of(isum[r / 2][2], isum[r / 2][3], r % 2);
            };
#pragma GCC unroll 4
            for (int m = 0; m < 4; ++m) {
                mmla::oct_products<P>(isum, x, u, m);
                if (kHalves && m == 1) {
                    for (int r = 0; r < R; ++r) {
                        int32x4_t rs[2];
                        row_sums(r, rs);
                        kq_scale_add_neon(acc[r], rs, s, o, a_scale[row + r], a_corr[(row + r) * kKqCorrPerBlock]);
                    }
                    for (int p = 0; p < P; ++p) {
                        for (int q = 0; q < 4; ++q) isum[p][q] = vdupq_n_s32(0);
                    }
                }
            }
            for (int r = 0; r < R; ++r) {
                const float* corr = a_corr + (row + r) * kKqCorrPerBlock;
                int32x4_t rs[2];
                row_sums(r, rs);
                if (kHalves) {
                    kq_scale_add_neon(acc[r], rs, s + kPanel, o + kPanel, a_scale[row + r], corr[1]);
                } else {
                    kq_scale_add_neon(acc[r], rs, s, o, a_scale[row + r], corr[2]);
                }
            }
        }
        for (int r = 0; r < R; ++r) store_row_neon<2>(c + r * ldc + 8 * h, acc[r], bias ? bias + 8 * h : nullptr, accumulate);
    }
};

}  // namespace

// The decoder and the tile change together (the units' pair order); the activation quantiser
// stays portable and the tile keeps kRowsKq rows.
void add_matmul_kquant_i8mm(KernelTable& t) {
    t.matmul.decode_kq_units = decode_kq_units_pairs;
    t.matmul.tile_kq = neon_kq::tile<Smmla>;
}

}  // namespace pk::kernels
