// AVX-512 attention for a block of query rows (see attention_rel_pos.h for the maths).
//
// On Zen 4 a zmm multiply-add costs two ymm ones, so the gain over the AVX2 path comes from
// loads, not arithmetic: the AVX2 kernel does one query row at a time and issues more loads
// than multiply-adds. Here up to four query rows share each load of keys (scores) and up to
// eight share each load of values (weighted sum), so the loops run at the multiply-add rate.
// Partial key and channel blocks use masked loads and stores through the same code.
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

// Scores of R query rows for the key frames [j0, j0 + 32), lanes beyond m0/m1 not stored.
// kT: [dk, T] keys of the head; p_rows[r] = pT + (T - 1 - i) for query row i, the column of
// its key frame 0 in the positions [dk, 2T - 1] (row stride p_ld).
template <int R>
void score_rows(const float* kT, const float* const* p_rows, int64_t T, int64_t p_ld, int64_t dk,
                const float* qu, const float* qv, int64_t j0, __mmask16 m0, __mmask16 m1,
                float inv_scale, float* const* scores) {
    __m512 a0[R], a1[R], b0[R], b1[R];
    PK_UNROLL_ROWS
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = b0[r] = b1[r] = _mm512_setzero_ps();
    const float* kr = kT + j0;
    for (int64_t c = 0; c < dk; ++c, kr += T) {
        const __m512 k0 = _mm512_maskz_loadu_ps(m0, kr);
        const __m512 k1 = _mm512_maskz_loadu_ps(m1, kr + 16);
        PK_UNROLL_ROWS
        for (int r = 0; r < R; ++r) {
            const __m512 quc = _mm512_set1_ps(qu[r * dk + c]);
            const __m512 qvc = _mm512_set1_ps(qv[r * dk + c]);
            const float* pr = p_rows[r] + c * p_ld + j0;
            a0[r] = _mm512_fmadd_ps(quc, k0, a0[r]);
            a1[r] = _mm512_fmadd_ps(quc, k1, a1[r]);
            b0[r] = _mm512_fmadd_ps(qvc, _mm512_maskz_loadu_ps(m0, pr), b0[r]);
            b1[r] = _mm512_fmadd_ps(qvc, _mm512_maskz_loadu_ps(m1, pr + 16), b1[r]);
        }
    }
    const __m512 s = _mm512_set1_ps(inv_scale);
    PK_UNROLL_ROWS
    for (int r = 0; r < R; ++r) {
        _mm512_mask_storeu_ps(scores[r] + j0, m0, _mm512_mul_ps(_mm512_add_ps(a0[r], b0[r]), s));
        _mm512_mask_storeu_ps(scores[r] + j0 + 16, m1, _mm512_mul_ps(_mm512_add_ps(a1[r], b1[r]), s));
    }
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

// Query rows handled together per load of keys / of values (accumulators: 4 per row for the
// scores, 2 per row for the weighted sum; 16 of the 32 zmm registers either way).
constexpr int kScoreRows = 4;
constexpr int kValueRows = 8;

void score_group(int rows, const float* kT, const float* const* p_rows, int64_t T, int64_t p_ld,
                 int64_t dk, const float* qu, const float* qv, int64_t j0, __mmask16 m0,
                 __mmask16 m1, float inv_scale, float* const* scores) {
    switch (rows) {
        case 4: score_rows<4>(kT, p_rows, T, p_ld, dk, qu, qv, j0, m0, m1, inv_scale, scores); break;
        case 3: score_rows<3>(kT, p_rows, T, p_ld, dk, qu, qv, j0, m0, m1, inv_scale, scores); break;
        case 2: score_rows<2>(kT, p_rows, T, p_ld, dk, qu, qv, j0, m0, m1, inv_scale, scores); break;
        default: score_rows<1>(kT, p_rows, T, p_ld, dk, qu, qv, j0, m0, m1, inv_scale, scores); break;
    }
}

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

// AttentionKernels::rel_pos_scores.
void scores_rows(const float* kT, const float* pT, int64_t T, int64_t dk, int64_t i0, int64_t nr,
                 const float* qu, const float* qv, float* scores) {
    const float inv_scale = 1.0f / sqrtf(static_cast<float>(dk));
    const int64_t p_ld = 2 * T - 1;
    // The key loop is outside the row loop so each block of keys and positions is read from
    // L1 by all rows of the block.
    for (int64_t j0 = 0; j0 < T; j0 += 32) {
        const __mmask16 m0 = first_lanes(T - j0), m1 = first_lanes(T - j0 - 16);
        for (int64_t r0 = 0; r0 < nr; r0 += kScoreRows) {
            const int rows = static_cast<int>(nr - r0 < kScoreRows ? nr - r0 : kScoreRows);
            const float* p_rows[kScoreRows];
            float* score_rows_out[kScoreRows];
            for (int r = 0; r < rows; ++r) {
                p_rows[r] = pT + (T - 1 - (i0 + r0 + r));
                score_rows_out[r] = scores + (r0 + r) * T;
            }
            score_group(rows, kT, p_rows, T, p_ld, dk, qu + r0 * dk, qv + r0 * dk, j0, m0, m1, inv_scale,
                        score_rows_out);
        }
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
