// AVX-512 attention for a block of query rows (see attention_rel_pos.h for the maths).
//
// The weighted sum: on Zen 4 a zmm multiply-add costs two ymm ones, so the gain over the AVX2
// path comes from loads, not arithmetic: up to eight query rows share each load of values, so
// the loop runs at the multiply-add rate. The scores: see scores_rows below. Partial blocks
// use masked loads and stores through the same code.
//
// Every score is the same chain of multiply-adds over the head channels in order, and every
// output channel the same chain over the key frames in order, however the rows are grouped,
// so a row's result does not depend on the block it was computed in.
#include <immintrin.h>

#include <math.h>

#include <cstdint>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx512.h"

// The row loops must be unrolled for the accumulator arrays to live in registers (GCC
// otherwise keeps them on the stack and the kernel runs at store rate).
#define PK_UNROLL_ROWS _Pragma("GCC unroll 8")

namespace pk::kernels {
namespace {

using vec512::first_lanes;
using vec512::transpose16;

// The scores run with one vector over the block's 16 query rows, the keys' and positions'
// channels broadcast from memory into the multiply-adds: every multiply-add then needs no
// load of its own. The other way round (a vector over key frames), as the weighted sum
// does, each query row reads its positions at its own shift, so the position term needs one
// load, often split across cache lines, per multiply-add; that kernel ran the scores at
// about half the FMA rate.

constexpr int kRows = static_cast<int>(kRelPosRowBlock);
static_assert(kRows == 16, "one zmm vector holds the block's query rows");

// rows[r] lane jj = sum over c < dk, in order, of q[c * 16 + r] * src[c * ld + col[jj]]: one
// multiply-add chain per (row, column), the column index broadcast. `src` holds dk rows of
// stride ld; col[jj] = col0 + jj, or with kClamp min(col0 + jj, last) for blocks that would
// read past the last column.
template <bool kClamp>
void column_block(const float* src, int64_t ld, int64_t col0, int64_t last, int64_t dk, const float* q,
                  __m512 rows[kRows]) {
    __m512 acc[kRows];
    int64_t col[kRows];
#pragma GCC unroll 16
    for (int jj = 0; jj < kRows; ++jj) {
        acc[jj] = _mm512_setzero_ps();
        col[jj] = kClamp && col0 + jj > last ? last : col0 + jj;
    }
    const float* s = kClamp ? src : src + col0;
    for (int64_t c = 0; c < dk; ++c, s += ld) {
        const __m512 qc = _mm512_loadu_ps(q + c * kRows);
#pragma GCC unroll 16
        for (int jj = 0; jj < kRows; ++jj)
            acc[jj] = _mm512_fmadd_ps(_mm512_set1_ps(kClamp ? s[col[jj]] : s[jj]), qc, acc[jj]);
    }
    transpose16(acc);
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) rows[r] = acc[r];
}

// column_block over columns [start, start + 16) of n: the unclamped kernel where 16 columns
// exist (always, once n >= 16).
void columns_from(const float* src, int64_t ld, int64_t start, int64_t n, int64_t dk, const float* q,
                  __m512 rows[kRows]) {
    if (start + kRows <= n) column_block<false>(src, ld, start, n - 1, dk, q, rows);
    else column_block<true>(src, ld, start, n - 1, dk, q, rows);
}

// Lanes jj of a block at column `start` whose column start + jj lies in [lo, hi).
__mmask16 lanes_within(int64_t start, int64_t lo, int64_t hi) {
    return static_cast<__mmask16>(first_lanes(hi - start) & ~first_lanes(lo - start));
}

// Calls f(start, fresh) for blocks of 16 of n columns: block b covers [16b, 16b + 16), but a
// last partial block starts at n - 16 (when n >= 16) and marks as fresh only its columns that
// no earlier block had, so every block but a short sequence's only one reads 16 real columns.
template <typename F>
void for_each_block(int64_t n, F&& f) {
    for (int64_t b = 0; b < n; b += kRows) {
        const int64_t start = n >= kRows && b + kRows > n ? n - kRows : b;
        f(start, lanes_within(start, b, n));
    }
}

// AttentionKernels::rel_pos_scores. The position term first, written into the score rows:
// row r reads the positions from column T-1-(i0+r) of pT on, so the block's rows together
// read the nr - 1 + T columns from m_lo = T - i0 - nr, and position column m_lo + m is row
// r's key frame m - (nr - 1 - r). Then the content term is added and the sum scaled.
void scores_rows(const float* kT, const float* pT, int64_t T, int64_t dk, int64_t i0, int64_t nr,
                 const float* qu, const float* qv, float* scores) {
    const __m512 inv_scale = _mm512_set1_ps(1.0f / sqrtf(static_cast<float>(dk)));
    const int64_t p_ld = 2 * T - 1, m_lo = T - i0 - nr, n_pos = T + nr - 1;
    __m512 rows[kRows];
    for_each_block(n_pos, [&](int64_t start, __mmask16 fresh) {
        columns_from(pT + m_lo, p_ld, start, n_pos, dk, qv, rows);
        for (int64_t r = 0; r < nr; ++r) {
            const int64_t j = start - (nr - 1 - r);  // row r's key frame of the block's lane 0
            _mm512_mask_storeu_ps(scores + r * T + j, fresh & lanes_within(j, 0, T), rows[r]);
        }
    });
    for_each_block(T, [&](int64_t start, __mmask16 fresh) {
        columns_from(kT, T, start, T, dk, qu, rows);
        for (int64_t r = 0; r < nr; ++r) {
            float* s = scores + r * T + start;
            const __m512 bd = _mm512_maskz_loadu_ps(fresh, s);
            _mm512_mask_storeu_ps(s, fresh, _mm512_mul_ps(_mm512_add_ps(rows[r], bd), inv_scale));
        }
    });
}

// out[r][c0 .. c0 + 32) = sum over j in [0, T) of scores[r][j] * v[j][c0 ..] for R rows
// (lanes beyond m0/m1 not stored).
template <int R>
void weighted_sum_rows(const float* scores, int64_t T, const float* v, int64_t ld, int64_t c0,
                       __mmask16 m0, __mmask16 m1, float* out) {
    __m512 a0[R], a1[R];
    PK_UNROLL_ROWS
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = _mm512_setzero_ps();
    const float* vr = v + c0;
    for (int64_t j = 0; j < T; ++j, vr += ld) {
        const __m512 v0 = _mm512_maskz_loadu_ps(m0, vr);
        const __m512 v1 = _mm512_maskz_loadu_ps(m1, vr + 16);
        PK_UNROLL_ROWS
        for (int r = 0; r < R; ++r) {
            const __m512 w = _mm512_set1_ps(scores[r * T + j]);
            a0[r] = _mm512_fmadd_ps(w, v0, a0[r]);
            a1[r] = _mm512_fmadd_ps(w, v1, a1[r]);
        }
    }
    PK_UNROLL_ROWS
    for (int r = 0; r < R; ++r) {
        _mm512_mask_storeu_ps(out + r * ld + c0, m0, a0[r]);
        _mm512_mask_storeu_ps(out + r * ld + c0 + 16, m1, a1[r]);
    }
}

// Query rows handled together per load of values (2 accumulators per row: 16 of the 32 zmm
// registers).
constexpr int kValueRows = 8;

void weighted_sum_group(int rows, const float* scores, int64_t T, const float* v, int64_t ld,
                        int64_t c0, __mmask16 m0, __mmask16 m1, float* out) {
    switch (rows) {
        case 8: weighted_sum_rows<8>(scores, T, v, ld, c0, m0, m1, out); break;
        case 7: weighted_sum_rows<7>(scores, T, v, ld, c0, m0, m1, out); break;
        case 6: weighted_sum_rows<6>(scores, T, v, ld, c0, m0, m1, out); break;
        case 5: weighted_sum_rows<5>(scores, T, v, ld, c0, m0, m1, out); break;
        case 4: weighted_sum_rows<4>(scores, T, v, ld, c0, m0, m1, out); break;
        case 3: weighted_sum_rows<3>(scores, T, v, ld, c0, m0, m1, out); break;
        case 2: weighted_sum_rows<2>(scores, T, v, ld, c0, m0, m1, out); break;
        default: weighted_sum_rows<1>(scores, T, v, ld, c0, m0, m1, out); break;
    }
}

// AttentionKernels::rel_pos_weighted_sums.
void weighted_sums_rows(const float* scores, const float* v, int64_t ld, int64_t T, int64_t dk,
                        int64_t nr, float* out) {
    for (int64_t r0 = 0; r0 < nr; r0 += kValueRows) {
        const int rows = static_cast<int>(nr - r0 < kValueRows ? nr - r0 : kValueRows);
        for (int64_t c0 = 0; c0 < dk; c0 += 32)
            weighted_sum_group(rows, scores + r0 * T, T, v, ld, c0, first_lanes(dk - c0),
                               first_lanes(dk - c0 - 16), out + r0 * ld);
    }
}

}  // namespace

void add_attention_rel_pos_avx512(KernelTable& t) {
    t.attention.rel_pos_scores = scores_rows;
    t.attention.rel_pos_weighted_sums = weighted_sums_rows;
}

}  // namespace pk::kernels
