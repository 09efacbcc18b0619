// AVX-512 inner loops of the local and windowed attention (contracts in
// attention_local_rel_pos_block.h): the AVX2 kernels' tiles twice as wide, so a product tile
// is 4 query rows x 48 columns (12 zmm accumulators) and the weighted sum covers 64 channels
// with 4 accumulators. Each value is the same chain of multiply-adds, in the same order, as in
// the AVX2 kernels, so the two levels give the same bits; the gain is half the instructions
// (and on cores with full-width AVX-512 units, half the time). No std:: templates here (see
// attention_local_rel_pos_avx2.cpp).
#include <immintrin.h>

#include <cstdint>

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
static_assert(kRowPad == 2, "tiles of four and two rows cover the rows");

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
    // Columns outside, rows inside: a tile's dk x 48 columns of m stay in L1 for all rows.
    for (int64_t col = col0; col < col1; col += kTileColumns) {
        int64_t r = 0;
        for (; r + 4 <= rows; r += 4) tile<4>(x + r * dk, dk, m + col, ldm, out + r * ldo + col, ldo);
        if (r < rows) tile<2>(x + r * dk, dk, m + col, ldm, out + r * ldo + col, ldo);
    }
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

// Keys per chunk of the weighted sum, as in the AVX2 kernel.
constexpr int64_t kValueChunk = 64;

void block_weighted_sums(const BlockRows& rows, const float* prob, int64_t ldp, const float* v, int64_t ld,
                         int64_t dk, float* out, int64_t ldo) {
    int64_t span_begin = rows.begin[0], span_end = rows.end[0];
    for (int64_t r = 0; r < rows.n; ++r) {
        for (int64_t c = 0; c < dk; ++c) out[r * ldo + c] = 0.0f;
        span_begin = rows.begin[r] < span_begin ? rows.begin[r] : span_begin;
        span_end = rows.end[r] > span_end ? rows.end[r] : span_end;
    }
    for (int64_t tc = span_begin; tc < span_end; tc += kValueChunk) {
        const int64_t tc_end = tc + kValueChunk < span_end ? tc + kValueChunk : span_end;
        for (int64_t r = 0; r < rows.n; ++r) {
            const int64_t t0 = tc > rows.begin[r] ? tc : rows.begin[r];
            const int64_t t1 = tc_end < rows.end[r] ? tc_end : rows.end[r];
            if (t0 >= t1) continue;
            for (int64_t c = 0; c < dk; c += 64) {
                const __mmask16 mask[4] = {vec512::first_lanes(dk - c), vec512::first_lanes(dk - c - 16),
                                           vec512::first_lanes(dk - c - 32), vec512::first_lanes(dk - c - 48)};
                accumulate(prob + r * ldp, v + c, ld, t0, t1, mask, out + r * ldo + c);
            }
        }
    }
}

}  // namespace

void add_attention_local_rel_pos_avx512(KernelTable& t) {
    t.attention.local_block_products = block_products;
    t.attention.local_block_weighted_sums = block_weighted_sums;
}

}  // namespace pk::kernels
