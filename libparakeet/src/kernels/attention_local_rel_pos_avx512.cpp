// AVX-512 inner loops of the local and windowed attention (contracts in
// attention_local_rel_pos_block.h): the AVX2 kernels' tiles twice as wide, so a product tile
// is 4 query rows x 48 columns (12 zmm accumulators) and the weighted sum covers 64 channels
// with 4 accumulators. Each value is the same chain of multiply-adds, in the same order, as in
// the AVX2 kernels, so the two levels give the same bits; the gain is half the instructions
// (and on cores with full-width AVX-512 units, half the time). No std:: templates here (see
// attention_local_rel_pos_avx2.cpp).
#include <immintrin.h>

#include <cstdint>

#include "kernels/attention_local_rel_pos_loops.h"
#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx512.h"

// The row loops must be unrolled for the accumulator arrays to live in registers (as in
// attention_rel_pos_avx512.cpp).
#define PK_UNROLL_ROWS _Pragma("GCC unroll 4")

namespace pk::kernels {
namespace {

using namespace local_attention;

constexpr int64_t kTileColumns = 48;
static_assert(kColumnPad % kTileColumns == 0, "tiles must not pass the operands' padding");

// out[r][0..48) = sum_c x[r][c] * m[c][0..48) for r < R (rows dk apart in x, ldo in out).
template <int R>
inline void tile(const float* x, int64_t dk, const float* m, int64_t ldm, float* out, int64_t ldo) {
    __m512 a0[R], a1[R], a2[R];
    PK_UNROLL_ROWS
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = a2[r] = _mm512_setzero_ps();
    for (int64_t c = 0; c < dk; ++c, m += ldm) {
        const __m512 m0 = _mm512_loadu_ps(m), m1 = _mm512_loadu_ps(m + 16), m2 = _mm512_loadu_ps(m + 32);
        PK_UNROLL_ROWS
        for (int r = 0; r < R; ++r) {
            const __m512 b = _mm512_set1_ps(x[r * dk + c]);
            a0[r] = _mm512_fmadd_ps(b, m0, a0[r]);
            a1[r] = _mm512_fmadd_ps(b, m1, a1[r]);
            a2[r] = _mm512_fmadd_ps(b, m2, a2[r]);
        }
    }
    PK_UNROLL_ROWS
    for (int r = 0; r < R; ++r) {
        _mm512_storeu_ps(out + r * ldo, a0[r]);
        _mm512_storeu_ps(out + r * ldo + 16, a1[r]);
        _mm512_storeu_ps(out + r * ldo + 32, a2[r]);
    }
}

void block_products(const float* x, int64_t rows, int64_t dk, const float* m, int64_t ldm, int64_t col0,
                    int64_t col1, float* out, int64_t ldo) {
    products_by_tiles(
        kTileColumns, x, rows, dk, m, col0, col1, out, ldo,
        [&](const float* xr, const float* mc, float* o) { tile<4>(xr, dk, mc, ldm, o, ldo); },
        [&](const float* xr, const float* mc, float* o) { tile<2>(xr, dk, mc, ldm, o, ldo); });
}

// o[lanes of the masks] += sum over t in [t0, t1) of prob[t] * v[t * ld + ...], in order of t,
// for 4 vectors of 16 channels (masks 0 leave a vector out).
inline void accumulate(const float* prob, const float* v, int64_t ld, int64_t t0, int64_t t1, const __mmask16* mask,
                       float* o) {
    __m512 a0 = _mm512_maskz_loadu_ps(mask[0], o), a1 = _mm512_maskz_loadu_ps(mask[1], o + 16);
    __m512 a2 = _mm512_maskz_loadu_ps(mask[2], o + 32), a3 = _mm512_maskz_loadu_ps(mask[3], o + 48);
    const float* vt = v + t0 * ld;
    for (int64_t t = t0; t < t1; ++t, vt += ld) {
        const __m512 wt = _mm512_set1_ps(prob[t]);
        a0 = _mm512_fmadd_ps(wt, _mm512_maskz_loadu_ps(mask[0], vt), a0);
        a1 = _mm512_fmadd_ps(wt, _mm512_maskz_loadu_ps(mask[1], vt + 16), a1);
        a2 = _mm512_fmadd_ps(wt, _mm512_maskz_loadu_ps(mask[2], vt + 32), a2);
        a3 = _mm512_fmadd_ps(wt, _mm512_maskz_loadu_ps(mask[3], vt + 48), a3);
    }
    _mm512_mask_storeu_ps(o, mask[0], a0), _mm512_mask_storeu_ps(o + 16, mask[1], a1);
    _mm512_mask_storeu_ps(o + 32, mask[2], a2), _mm512_mask_storeu_ps(o + 48, mask[3], a3);
}

void block_weighted_sums(const BlockRows& rows, const float* prob, int64_t ldp, const float* v, int64_t ld,
                         int64_t dk, float* out, int64_t ldo) {
    weighted_sums_by_chunks(rows, prob, ldp, dk, out, ldo, [&](const float* pr, int64_t t0, int64_t t1, float* o) {
        for (int64_t c = 0; c < dk; c += 64) {
            const __mmask16 mask[4] = {vec512::first_lanes(dk - c), vec512::first_lanes(dk - c - 16),
                                       vec512::first_lanes(dk - c - 32), vec512::first_lanes(dk - c - 48)};
            accumulate(pr, v + c, ld, t0, t1, mask, o + c);
        }
    });
}

}  // namespace

void add_attention_local_rel_pos_avx512(KernelTable& t) {
    t.attention.local_block_products = block_products;
    t.attention.local_block_weighted_sums = block_weighted_sums;
}

}  // namespace pk::kernels
