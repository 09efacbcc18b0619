// Q8_0 micro-kernels of the i8mm level (Armv8.6 FEAT_I8MM): the dotprod level's kernels with
// USDOT, which multiplies 4 unsigned by 4 signed bytes per lane as vpdpbusd does, so the packed
// u = q + 128 is used as stored and each block's sum starts at the activations' correction
// (-128 * their sum), which takes the offset back exactly: one instruction per 16 products
// fewer than SDOT's XOR. The same integer sums, so the same bits as the dotprod level.
#include <arm_neon.h>

#include <cstdint>

#include "kernels/kernel_table.h"
#include "kernels/matmul_q8_quads_neon.h"

namespace pk::kernels {
namespace {

struct Usdot {
    static int32x4_t start(int32_t corr) { return vdupq_n_s32(corr); }
    template <int L, int NG>
    static void block(int32x4_t* isum, const uint8x16_t* w, int8x16_t x) {
        for (int g = 0; g < NG; ++g) isum[g] = vusdotq_laneq_s32(isum[g], w[g], x, L);
    }
};

void tile_q8_usdot(int64_t rows, int64_t nblocks, const int8_t* a, const float* a_scale, const int32_t* a_corr,
                   const uint8_t* b, float* c, int64_t ldc, const float* bias, bool accumulate) {
    neon_q8::tile<Usdot>(rows, nblocks, a, a_scale, a_corr, b, c, ldc, bias, accumulate);
}

void matvec_q8_usdot(const int8_t* xq, const float* x_scale, const int32_t* x_corr, int64_t nblocks,
                     const uint8_t* panel, float* out) {
    neon_q8::matvec<Usdot>(xq, x_scale, x_corr, nblocks, panel, out);
}

}  // namespace

// The quantiser stays the dotprod level's.
void add_matmul_kernels_i8mm(KernelTable& t) {
    t.matmul.tile_q8_vnni = tile_q8_usdot;
    t.matmul.matvec_q8_vnni = matvec_q8_usdot;
}

}  // namespace pk::kernels
