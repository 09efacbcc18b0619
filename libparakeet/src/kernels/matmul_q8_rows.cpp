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

// nblocks consecutive blocks of x into q / scale / corr.
void quantize_blocks(const MatmulKernels& k, const float* x, int64_t nblocks, int8_t* q, float* scale,
                     int32_t* corr) {
    for (int64_t b = 0; b < nblocks; b += kBlocksPerCall) {
        const int64_t n = std::min(kBlocksPerCall, nblocks - b);
        if (k.quantize_q8_vnni) {
            // The n blocks as the one-block rows of a panel of n rows: that panel's layout is the
            // blocks' own (block r at q + 32 r, its scale and correction at r).
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

// Where the blocks of the product's rows are: row m's block kb is block (kb % run_blocks) of map
// row sources[m * taps + kb / run_blocks] (sources null: map row m, one run per row).
struct Blocks {
    const Q8Rows& map;
    int64_t run_blocks, taps;
    const int64_t* sources;
    int64_t M;

    // Calls f(b, s) for b < kc with s the map block of row `row`'s block pc + b, or -1 where that
    // block is zero (a gathered -1, or a row at or past M).
    template <class F>
    void each(int64_t row, int64_t pc, int64_t kc, F&& f) const {
        int64_t tap = pc / run_blocks, inner = pc % run_blocks;
        for (int64_t b = 0; b < kc; ++b) {
            const int64_t src = row >= M ? -1 : sources ? sources[row * taps + tap] : row;
            f(b, src < 0 ? -1 : src * run_blocks + inner);
            if (++inner == run_blocks) inner = 0, ++tap;
        }
    }
};

// The product on the rows `x` describes: its blocks copied into the activation panels that
// matmul()'s quantiser writes at w's level, then matmul()'s tile loop.
void gathered_product(ThreadTeam& team, Arena& scratch, const Blocks& x, int64_t K, const PackedWeights& w,
                      const float* bias, float* y, int64_t ldy) {
    const MatmulKernels& kern = w.kernels();
    const int64_t M = x.M;
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
            for (int64_t r = 0; r < mr; ++r)
                x.each(i * mr + r, pc, kc, [&](int64_t b, int64_t s) {
                    const int64_t dst = o + b * mr + r;
                    if (s < 0) {
                        std::memset(aq + dst * kQ8Block, 0, kQ8Block);
                        as[dst] = 0.0f;
                        ac[dst] = 0;
                        return;
                    }
                    std::memcpy(aq + dst * kQ8Block, x.map.q + s * kQ8Block, kQ8Block);
                    as[dst] = x.map.scale[s];
                    ac[dst] = x.map.corr[s];
                });
        });
        gemm_q8_vnni_packed(kern, team, aq, as, ac, M, w, bias, y, ldy);
        return;
    }
    int16_t* aq = scratch.alloc_array<int16_t>(panel_blocks * kQ8Block);
    // The int16 panel: the pairs of the panel's rows interleaved, pair t of block b of row r at
    // 2 ((16 b + t) mr + r) from the slice's start.
    pack_slices(team, row_panels, mr, K, nblocks, kKcQ8Blocks, [&](int64_t i, int64_t pc, int64_t kc) {
        const int64_t o = q8_slice_offset(row_panels, mr, i, pc, kc);
        int16_t* a = aq + o * kQ8Block;
        for (int64_t r = 0; r < mr; ++r)
            x.each(i * mr + r, pc, kc, [&](int64_t b, int64_t s) {
                for (int64_t v = 0; v < kQ8Block; ++v)
                    a[2 * ((kQ8PairsPerBlock * b + v / 2) * mr + r) + v % 2] = s < 0 ? 0 : x.map.q[s * kQ8Block + v];
                as[o + b * mr + r] = s < 0 ? 0.0f : x.map.scale[s];
            });
    });
    gemm_q8_packed(kern, team, scratch, aq, as, M, w, bias, y, ldy);
}

// The checks both entries make; false when there is nothing to compute.
bool check_product(const char* entry, int64_t M, int64_t K, const PackedWeights& w, int64_t& ldy) {
    if (w.type() != WeightType::Q8_0) throw std::invalid_argument(std::string(entry) + ": the weights are not Q8_0");
    ldy = checked_ldy(entry, M, K, w, ldy);
    return M > 0;
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
    if (ldx == K) {
        // Contiguous rows are one run of blocks, quantised kBlocksPerCall at a time however short
        // the rows are (a map of 32 channels has one block per row).
        const int64_t total = rows * nblocks, groups = ceil_div(total, kBlocksPerCall);
        const int64_t grain = std::max<int64_t>(1, kMinPackValuesPerChunk / (kBlocksPerCall * kQ8Block));
        parallel_for(team, groups, grain, [&](int64_t g0, int64_t g1) {
            const int64_t b0 = g0 * kBlocksPerCall, b1 = std::min(total, g1 * kBlocksPerCall);
            quantize_blocks(k, x + b0 * kQ8Block, b1 - b0, out.q + b0 * kQ8Block, out.scale + b0, out.corr + b0);
        });
        return;
    }
    parallel_for(team, rows, std::max<int64_t>(1, kMinPackValuesPerChunk / K), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
            quantize_blocks(k, x + r * ldx, nblocks, out.q + r * K, out.scale + r * nblocks, out.corr + r * nblocks);
    });
}

void matmul_q8_rows(ThreadTeam& team, Arena& scratch, const Q8Rows& x, int64_t M, int64_t K,
                    const PackedWeights& w, const float* bias, float* y, int64_t ldy) {
    if (!check_product("matmul_q8_rows", M, K, w, ldy)) return;
    ArenaScope scope(scratch);
    gathered_product(team, scratch, Blocks{x, K / kQ8Block, 1, nullptr, M}, K, w, bias, y, ldy);
}

void matmul_q8_gather(ThreadTeam& team, Arena& scratch, const Q8Gather& x, int64_t M, int64_t K,
                      const PackedWeights& w, const float* bias, float* y, int64_t ldy) {
    if (x.run < kQ8Block || x.run % kQ8Block != 0 || K % x.run != 0)
        throw std::invalid_argument("matmul_q8_gather: runs of " + std::to_string(x.run) +
                                    " values are not whole blocks of 32 dividing K = " + std::to_string(K));
    if (!check_product("matmul_q8_gather", M, K, w, ldy)) return;
    ArenaScope scope(scratch);
    gathered_product(team, scratch, Blocks{x.map, x.run / kQ8Block, K / x.run, x.sources, M}, K, w, bias, y, ldy);
}

}  // namespace pk::kernels
