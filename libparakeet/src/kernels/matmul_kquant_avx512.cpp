// The unsigned-form tile with AVX-512 VNNI: one vpdpbusd per quad of k multiplies the 16
// outputs' unsigned weights by four signed activations. Same float operations, in the same
// order, as the portable tile (matmul_kquant.cpp), so the levels agree bitwise. Activation
// panels of kRowsKqVnni = 8 rows (the portable and AVX2 tiles take 4): with 32 registers each
// weight vector serves 8 rows, 370 -> 400 GFLOP/s for q4_k at 125 x 512 x 2048, 1 thread, Intel Xeon.
#include <immintrin.h>

#include "kernels/kernel_table.h"
#include "kernels/matmul_store_avx512.h"
#include "kernels/matmul_vnni_avx512.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

// int32 -> float (exact for block sums); the masked form, because GCC 12 warns that the plain
// one's undefined source register "may be used uninitialized".
inline __m512 to_float(__m512i v) { return _mm512_maskz_cvtepi32_ps(0xFFFF, v); }

template <bool kHalves, int kRows>
void tile_kq_vnni(int64_t nunits, const int8_t* a, const float* a_scale, const float* a_corr,
                  const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    // The q8_0 tile's order (matmul_kernels_avx512.cpp): quad by quad, each weight vector
    // loaded once and used by every row, the rows' integer sums independent chains.
    constexpr int kGroups = kHalves ? 2 : 1;
    constexpr int kQuadsPerGroup = kQ8QuadsPerBlock / kGroups;
    __m512 acc[kRows];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nunits; ++b) {
        const uint8_t* unit = units + static_cast<size_t>(b) * kKqUnitBytes;
        const auto* so = reinterpret_cast<const float*>(unit);
        const auto* u = reinterpret_cast<const __m512i*>(unit + 4 * kPanel * sizeof(float));
        const int8_t* qb = a + b * kRowsKqVnni * kQ8Block;
#pragma GCC unroll 2
        for (int g = 0; g < kGroups; ++g) {
            __m512i isum[kRows];
#pragma GCC unroll 8
            for (int r = 0; r < kRows; ++r) isum[r] = _mm512_setzero_si512();
#pragma GCC unroll 8
            for (int t = g * kQuadsPerGroup; t < (g + 1) * kQuadsPerGroup; ++t) {
                const __m512i wt = _mm512_loadu_si512(u + t);
#pragma GCC unroll 8
                for (int r = 0; r < kRows; ++r) {
                    isum[r] = dpbusd_broadcast(isum[r], wt, qb + r * kQ8Block + 4 * t);
                }
            }
            const __m512 sg = _mm512_loadu_ps(so + g * kPanel), og = _mm512_loadu_ps(so + (2 + g) * kPanel);
#pragma GCC unroll 8
            for (int r = 0; r < kRows; ++r) {
                const int64_t row = b * kRowsKqVnni + r;
                const float corr = a_corr[row * kKqCorrPerBlock + (kHalves ? g : 2)];
                acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(sg, to_float(isum[r])), _mm512_set1_ps(a_scale[row]), acc[r]);
                acc[r] = _mm512_fnmadd_ps(og, _mm512_set1_ps(corr), acc[r]);
            }
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) store_row_avx512(c + r * ldc, acc[r], bias, accumulate);
}

void tile_kq(int64_t rows, int64_t nunits, bool halves, const int8_t* a, const float* a_scale, const float* a_corr,
             const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    // Row counts as template arguments, so that the rows' accumulators stay in registers.
    using Tile = void (*)(int64_t, const int8_t*, const float*, const float*, const uint8_t*, float*, int64_t,
                          const float*, bool);
    static constexpr Tile kTiles[2][kRowsKqVnni] = {
        {tile_kq_vnni<false, 1>, tile_kq_vnni<false, 2>, tile_kq_vnni<false, 3>, tile_kq_vnni<false, 4>,
         tile_kq_vnni<false, 5>, tile_kq_vnni<false, 6>, tile_kq_vnni<false, 7>, tile_kq_vnni<false, 8>},
        {tile_kq_vnni<true, 1>, tile_kq_vnni<true, 2>, tile_kq_vnni<true, 3>, tile_kq_vnni<true, 4>,
         tile_kq_vnni<true, 5>, tile_kq_vnni<true, 6>, tile_kq_vnni<true, 7>, tile_kq_vnni<true, 8>}};
    kTiles[halves][rows - 1](nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
}

}  // namespace

void add_matmul_kquant_avx512(KernelTable& t) {
    t.matmul.tile_kq = tile_kq;
    t.matmul.kq_rows = kRowsKqVnni;
}

}  // namespace pk::kernels
