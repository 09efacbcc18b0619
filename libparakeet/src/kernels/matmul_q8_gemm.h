// Internal to the matmul driver: the Q8_0 GEMMs in two halves, the packing of the activations
// into row panels and the loop over the tiles, so that the products on rows quantised
// beforehand (matmul_q8_rows.cpp) pack their rows their own way and then run the very loop
// matmul() runs (hence the same bits). Portable code only: no ISA file includes this.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/matmul_layout.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::kernels::matmul_detail {

// The Q8_0 GEMMs' K slice, in blocks (512 k): part of each output's summation order, which
// the matrix-vector kernel follows too.
constexpr int64_t kKcQ8Blocks = 16;
// Activation packing is memory bound: at least this many values per chunk.
constexpr int64_t kMinPackValuesPerChunk = 64 * 1024;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Offset, in blocks of one row, of row panel ir's slice that starts at block pc and is kc
// blocks long, in the Q8_0 activation panels of mr rows (matmul_layout.h): slice pc holds every
// row panel's kc blocks in turn. The scales (and corrections) sit at the same offset.
inline int64_t q8_slice_offset(int64_t row_panels, int64_t mr, int64_t ir, int64_t pc, int64_t kc) {
    return (pc * row_panels + ir * kc) * mr;
}

// Runs pack(i, pc, kc) over every row panel i (of mr rows) and K slice [pc, pc + kc) of
// k_units (kc <= kc_max), row panels split over the team: the activation packing of the GEMMs.
template <class Pack>
void pack_slices(ThreadTeam& team, int64_t row_panels, int64_t mr, int64_t K, int64_t k_units, int64_t kc_max,
                 Pack&& pack) {
    parallel_for(team, row_panels, std::max<int64_t>(1, kMinPackValuesPerChunk / (mr * K)),
                 [&](int64_t b, int64_t e) {
                     for (int64_t i = b; i < e; ++i) {
                         for (int64_t pc = 0; pc < k_units; pc += kc_max) {
                             pack(i, pc, std::min(kc_max, k_units - pc));
                         }
                     }
                 });
}

// The row stride of y (ldy < 0: N) after checking a product's sizes against w; throws
// std::invalid_argument, its message starting with `entry`, for a K other than w.k(), a
// negative M or ldy < N.
int64_t checked_ldy(const char* entry, int64_t M, int64_t K, const PackedWeights& w, int64_t ldy);

// y = x W^T + bias for M rows already packed: the int16 panels of kRowsQ8 rows (aq, as) that
// MatmulKernels::quantize_panel_q8 writes, for the tile_q8 levels.
void gemm_q8_packed(const MatmulKernels& kern, ThreadTeam& team, Arena& scratch, const int16_t* aq, const float* as,
                    int64_t M, const PackedWeights& w, const float* bias, float* y, int64_t ldy);
// The same on the VNNI panels of kRowsQ8Vnni rows (aq, as, ac) that quantize_q8_vnni writes,
// for the levels with tile_q8_vnni.
void gemm_q8_vnni_packed(const MatmulKernels& kern, ThreadTeam& team, const int8_t* aq,
                         const float* as, const int32_t* ac, int64_t M, const PackedWeights& w, const float* bias,
                         float* y, int64_t ldy);

}  // namespace pk::kernels::matmul_detail
