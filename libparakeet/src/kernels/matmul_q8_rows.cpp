// Products on rows quantised beforehand (matmul_q8_rows.h): the rows are quantised by the
// level's activation quantiser, and a product copies their blocks into the activation panels
// that matmul()'s quantiser would have written, then runs matmul()'s tile loop on them.
#include "kernels/matmul_q8_rows.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/kernel_table.h"
#include "kernels/matmul_q8_gemm.h"

namespace pk::kernels {

using namespace matmul_detail;

namespace {

// Blocks quantised per call: a GEMM row panel's worth, which the VNNI quantisers do together.
constexpr int64_t kBlocksPerCall = kRowsQ8Vnni;

// One row's nblocks blocks into q / scale / corr.
void quantize_row(const MatmulKernels& k, const float* x, int64_t nblocks, int8_t* q, float* scale, int32_t* corr) {
    for (int64_t b = 0; b < nblocks; b += kBlocksPerCall) {
        const int64_t n = std::min(kBlocksPerCall, nblocks - b);
        if (k.quantize_q8_vnni) {
            // The n blocks as the one-block rows of a panel of n rows: that panel's layout is the
            // row's own (block r at q + 32 r, its scale and correction at r).
            k.quantize_q8_vnni(x + b * kQ8Block, n, kQ8Block, 1, n, q + b * kQ8Block, scale + b, corr + b);
            continue;
        }
        // The int16 quantiser's one-row layout is the values in order; they fit in int8.
        int16_t wide[kBlocksPerCall * kQ8Block];
        k.quantize_row_q8(x + b * kQ8Block, n * kQ8Block, wide, scale + b);
        for (int64_t j = 0; j < n; ++j) {
            int32_t sum = 0;
            for (int64_t i = 0; i < kQ8Block; ++i) {
                q[(b + j) * kQ8Block + i] = static_cast<int8_t>(wide[j * kQ8Block + i]);
                sum += wide[j * kQ8Block + i];
            }
            corr[b + j] = -kQ8QuadBias * sum;
        }
    }
}

}  // namespace

Q8Rows alloc_q8_rows(Arena& arena, int64_t rows, int64_t K) {
    const size_t blocks = static_cast<size_t>(rows * (K / kQ8Block));
    return Q8Rows{arena.alloc_array<int8_t>(static_cast<size_t>(rows * K)), arena.alloc_array<float>(blocks),
                  arena.alloc_array<int32_t>(blocks)};
}

void quantize_q8_rows(IsaLevel level, ThreadTeam& team, const float* x, int64_t rows, int64_t K, int64_t ldx,
                      const Q8Rows& out) {
    if (K < kQ8Block || K % kQ8Block != 0)
        throw std::invalid_argument("quantize_q8_rows: K = " + std::to_string(K) + " is not a multiple of 32");
    if (ldx < K) throw std::invalid_argument("quantize_q8_rows: ldx < K");
    const MatmulKernels& k = kernel_table(level).matmul;
    const int64_t nblocks = K / kQ8Block;
    parallel_for(team, rows, std::max<int64_t>(1, kMinPackValuesPerChunk / K), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
            quantize_row(k, x + r * ldx, nblocks, out.q + r * K, out.scale + r * nblocks, out.corr + r * nblocks);
    });
}

void matmul_q8_rows(ThreadTeam& team, Arena& scratch, const Q8Rows& x, int64_t M, int64_t K,
                    const PackedWeights& w, const float* bias, float* y, int64_t ldy) {
    if (w.type() != WeightType::Q8_0) throw std::invalid_argument("matmul_q8_rows: the weights are not Q8_0");
    ldy = checked_ldy("matmul_q8_rows", M, K, w, ldy);
    if (M == 0) return;
    const MatmulKernels& kern = w.kernels();
    ArenaScope scope(scratch);
    const bool vnni = kern.tile_q8_vnni != nullptr;
    const int64_t mr = vnni ? kRowsQ8Vnni : kRowsQ8;
    const int64_t row_panels = ceil_div(M, mr);
    const int64_t nblocks = K / kQ8Block;
    const size_t panel_blocks = static_cast<size_t>(row_panels * mr * nblocks);
    float* as = scratch.alloc_array<float>(panel_blocks);
    if (vnni) {
        int8_t* aq = scratch.alloc_array<int8_t>(panel_blocks * kQ8Block);
        int32_t* ac = scratch.alloc_array<int32_t>(panel_blocks);
        // The VNNI panel: block b of row r at o + b * mr + r, its 32 values contiguous.
        pack_slices(team, row_panels, mr, K, nblocks, kKcQ8Blocks, [&](int64_t i, int64_t pc, int64_t kc) {
            const int64_t o = q8_slice_offset(row_panels, mr, i, pc, kc);
            for (int64_t b = 0; b < kc; ++b)
                for (int64_t r = 0; r < mr; ++r) {
                    const int64_t row = i * mr + r, dst = o + b * mr + r, src = row * nblocks + pc + b;
                    const bool live = row < M;
                    if (live) std::memcpy(aq + dst * kQ8Block, x.q + src * kQ8Block, kQ8Block);
                    else std::memset(aq + dst * kQ8Block, 0, kQ8Block);
                    as[dst] = live ? x.scale[src] : 0.0f;
                    ac[dst] = live ? x.corr[src] : 0;
                }
        });
        gemm_q8_vnni_packed(kern, team, scratch, aq, as, ac, M, w, bias, y, ldy);
        return;
    }
    int16_t* aq = scratch.alloc_array<int16_t>(panel_blocks * kQ8Block);
    // The int16 panel: the pairs of the panel's rows interleaved, pair t of block b of row r at
    // 2 ((16 b + t) mr + r) from the slice's start.
    pack_slices(team, row_panels, mr, K, nblocks, kKcQ8Blocks, [&](int64_t i, int64_t pc, int64_t kc) {
        const int64_t o = q8_slice_offset(row_panels, mr, i, pc, kc);
        int16_t* a = aq + o * kQ8Block;
        for (int64_t b = 0; b < kc; ++b)
            for (int64_t r = 0; r < mr; ++r) {
                const int64_t row = i * mr + r, src = row * nblocks + pc + b;
                const bool live = row < M;
                for (int64_t v = 0; v < kQ8Block; ++v)
                    a[2 * ((kQ8PairsPerBlock * b + v / 2) * mr + r) + v % 2] = live ? x.q[src * kQ8Block + v] : 0;
                as[o + b * mr + r] = live ? x.scale[src] : 0.0f;
            }
    });
    gemm_q8_packed(kern, team, scratch, aq, as, M, w, bias, y, ldy);
}

}  // namespace pk::kernels
