// The unsigned-form tile with AVX-512 VNNI: one vpdpbusd per quad of k multiplies the 16
// outputs' unsigned weights by four signed activations. Same float operations, in the same
// order, as the portable tile (matmul_kquant.cpp), so the levels agree bitwise.
#include <immintrin.h>

#include "kernels/kernel_table.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

// int32 -> float (exact for block sums); the masked form, because GCC 12 warns that the plain
// one's undefined source register "may be used uninitialized".
inline __m512 to_float(__m512i v) { return _mm512_maskz_cvtepi32_ps(0xFFFF, v); }

// Four activations (one 32-bit word) in every lane, loaded straight from memory: the load
// port broadcasts it (vpbroadcastd zmm, m32). Going through a general register instead costs
// two vector-pipe uops per quad, as many as the vpdpbusd itself, and halved the tile's speed.
inline __m512i broadcast_quad(const int8_t* p) {
    int32_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return _mm512_set1_epi32(v);
}

template <bool kHalves, int kRows>
void tile_kq_vnni(int64_t nunits, const int8_t* a, const float* a_scale, const float* a_corr,
                  const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    __m512 acc[kRows];
    for (auto& v : acc) v = _mm512_setzero_ps();
    for (int64_t b = 0; b < nunits; ++b) {
        const uint8_t* unit = units + static_cast<size_t>(b) * kKqUnitBytes;
        const auto* so = reinterpret_cast<const float*>(unit);
        const uint8_t* u = unit + 4 * kPanel * sizeof(float);
        __m512i w[kQ8QuadsPerBlock];
        for (int64_t t = 0; t < kQ8QuadsPerBlock; ++t) w[t] = _mm512_loadu_si512(u + 64 * t);
        const __m512 s0 = _mm512_loadu_ps(so), s1 = _mm512_loadu_ps(so + kPanel);
        const __m512 o0 = _mm512_loadu_ps(so + 2 * kPanel), o1 = _mm512_loadu_ps(so + 3 * kPanel);
        for (int r = 0; r < kRows; ++r) {
            const int64_t row = b * kRowsKq + r;
            const int8_t* qx = a + row * kQ8Block;
            __m512i isum0 = _mm512_setzero_si512(), isum1 = _mm512_setzero_si512();
            for (int64_t t = 0; t < 4; ++t) isum0 = _mm512_dpbusd_epi32(isum0, w[t], broadcast_quad(qx + 4 * t));
            for (int64_t t = 4; t < 8; ++t) isum1 = _mm512_dpbusd_epi32(isum1, w[t], broadcast_quad(qx + 4 * t));
            const __m512 dx = _mm512_set1_ps(a_scale[row]);
            const float* corr = a_corr + row * kKqCorrPerBlock;
            if (kHalves) {
                acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(s0, to_float(isum0)), dx, acc[r]);
                acc[r] = _mm512_fnmadd_ps(o0, _mm512_set1_ps(corr[0]), acc[r]);
                acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(s1, to_float(isum1)), dx, acc[r]);
                acc[r] = _mm512_fnmadd_ps(o1, _mm512_set1_ps(corr[1]), acc[r]);
            } else {
                const __m512 isum = to_float(_mm512_add_epi32(isum0, isum1));
                acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(s0, isum), dx, acc[r]);
                acc[r] = _mm512_fnmadd_ps(o0, _mm512_set1_ps(corr[2]), acc[r]);
            }
        }
    }
    for (int r = 0; r < kRows; ++r) {
        float* cr = c + r * ldc;
        __m512 v = acc[r];
        if (accumulate) {
            v = _mm512_add_ps(_mm512_loadu_ps(cr), v);
        } else if (bias) {
            v = _mm512_add_ps(v, _mm512_loadu_ps(bias));
        }
        _mm512_storeu_ps(cr, v);
    }
}

void tile_kq(int64_t rows, int64_t nunits, bool halves, const int8_t* a, const float* a_scale, const float* a_corr,
             const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    // Row counts as template arguments, so that the rows' accumulators stay in registers.
    using Tile = void (*)(int64_t, const int8_t*, const float*, const float*, const uint8_t*, float*, int64_t,
                          const float*, bool);
    static constexpr Tile kTiles[2][kRowsKq] = {
        {tile_kq_vnni<false, 1>, tile_kq_vnni<false, 2>, tile_kq_vnni<false, 3>, tile_kq_vnni<false, 4>},
        {tile_kq_vnni<true, 1>, tile_kq_vnni<true, 2>, tile_kq_vnni<true, 3>, tile_kq_vnni<true, 4>}};
    kTiles[halves][rows - 1](nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
}

}  // namespace

void add_matmul_kquant_avx512(KernelTable& t) { t.matmul.tile_kq = tile_kq; }

}  // namespace pk::kernels
