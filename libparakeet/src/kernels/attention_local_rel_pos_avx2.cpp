// AVX2/FMA inner loops of the local attention (contracts in attention_local_rel_pos_block.h).
// Intrinsics keep the accumulators in registers: product tiles of 4 query rows x 24 columns
// (12 ymm accumulators), and 64 output channels per pass of the weighted sum. No std::
// templates here: an out-of-line copy compiled with AVX2 could be picked for portable code.
#include <immintrin.h>

#include <cstdint>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx2.h"

namespace pk::kernels {
namespace {

using namespace local_attention;

// 4 rows x 3 vectors of accumulators, plus the three column vectors and a broadcast, fill
// the 16 ymm registers; each column vector loaded is used by four rows.
constexpr int64_t kTileColumns = 24;
static_assert(kColumnPad % kTileColumns == 0, "tiles must not pass the operands' padding");
static_assert(kRowPad == 2, "tile4x24 and tile2x24 cover the rows");

// out[r][0..24) = sum_c x[r][c] * m[c][0..24) for r < 4 (rows dk apart in x, ldo in out).
static inline void tile4x24(const float* x, int64_t dk, const float* m, int64_t ldm, float* out, int64_t ldo) {
    __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00;
    __m256 a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
    for (int64_t c = 0; c < dk; ++c, m += ldm) {
        const __m256 m0 = _mm256_loadu_ps(m), m1 = _mm256_loadu_ps(m + 8), m2 = _mm256_loadu_ps(m + 16);
        __m256 b = _mm256_broadcast_ss(x + c);
        a00 = _mm256_fmadd_ps(b, m0, a00), a01 = _mm256_fmadd_ps(b, m1, a01), a02 = _mm256_fmadd_ps(b, m2, a02);
        b = _mm256_broadcast_ss(x + dk + c);
        a10 = _mm256_fmadd_ps(b, m0, a10), a11 = _mm256_fmadd_ps(b, m1, a11), a12 = _mm256_fmadd_ps(b, m2, a12);
        b = _mm256_broadcast_ss(x + 2 * dk + c);
        a20 = _mm256_fmadd_ps(b, m0, a20), a21 = _mm256_fmadd_ps(b, m1, a21), a22 = _mm256_fmadd_ps(b, m2, a22);
        b = _mm256_broadcast_ss(x + 3 * dk + c);
        a30 = _mm256_fmadd_ps(b, m0, a30), a31 = _mm256_fmadd_ps(b, m1, a31), a32 = _mm256_fmadd_ps(b, m2, a32);
    }
    _mm256_storeu_ps(out, a00), _mm256_storeu_ps(out + 8, a01), _mm256_storeu_ps(out + 16, a02);
    out += ldo;
    _mm256_storeu_ps(out, a10), _mm256_storeu_ps(out + 8, a11), _mm256_storeu_ps(out + 16, a12);
    out += ldo;
    _mm256_storeu_ps(out, a20), _mm256_storeu_ps(out + 8, a21), _mm256_storeu_ps(out + 16, a22);
    out += ldo;
    _mm256_storeu_ps(out, a30), _mm256_storeu_ps(out + 8, a31), _mm256_storeu_ps(out + 16, a32);
}

// The same for r < 2, each value the same chain of multiply-adds.
static inline void tile2x24(const float* x, int64_t dk, const float* m, int64_t ldm, float* out, int64_t ldo) {
    __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00;
    for (int64_t c = 0; c < dk; ++c, m += ldm) {
        const __m256 m0 = _mm256_loadu_ps(m), m1 = _mm256_loadu_ps(m + 8), m2 = _mm256_loadu_ps(m + 16);
        __m256 b = _mm256_broadcast_ss(x + c);
        a00 = _mm256_fmadd_ps(b, m0, a00), a01 = _mm256_fmadd_ps(b, m1, a01), a02 = _mm256_fmadd_ps(b, m2, a02);
        b = _mm256_broadcast_ss(x + dk + c);
        a10 = _mm256_fmadd_ps(b, m0, a10), a11 = _mm256_fmadd_ps(b, m1, a11), a12 = _mm256_fmadd_ps(b, m2, a12);
    }
    _mm256_storeu_ps(out, a00), _mm256_storeu_ps(out + 8, a01), _mm256_storeu_ps(out + 16, a02);
    out += ldo;
    _mm256_storeu_ps(out, a10), _mm256_storeu_ps(out + 8, a11), _mm256_storeu_ps(out + 16, a12);
}

// o[0..64) += sum over t in [t0, t1) of prob[t] * v[t * ld + 0..64), in order of t.
static inline void accumulate64(const float* prob, const float* v, int64_t ld, int64_t t0, int64_t t1, float* o) {
    __m256 a0 = _mm256_loadu_ps(o), a1 = _mm256_loadu_ps(o + 8), a2 = _mm256_loadu_ps(o + 16);
    __m256 a3 = _mm256_loadu_ps(o + 24), a4 = _mm256_loadu_ps(o + 32), a5 = _mm256_loadu_ps(o + 40);
    __m256 a6 = _mm256_loadu_ps(o + 48), a7 = _mm256_loadu_ps(o + 56);
    const float* vt = v + t0 * ld;
    for (int64_t t = t0; t < t1; ++t, vt += ld) {
        const __m256 wt = _mm256_broadcast_ss(prob + t);
        a0 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(vt), a0);
        a1 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(vt + 8), a1);
        a2 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(vt + 16), a2);
        a3 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(vt + 24), a3);
        a4 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(vt + 32), a4);
        a5 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(vt + 40), a5);
        a6 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(vt + 48), a6);
        a7 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(vt + 56), a7);
    }
    _mm256_storeu_ps(o, a0), _mm256_storeu_ps(o + 8, a1), _mm256_storeu_ps(o + 16, a2);
    _mm256_storeu_ps(o + 24, a3), _mm256_storeu_ps(o + 32, a4), _mm256_storeu_ps(o + 40, a5);
    _mm256_storeu_ps(o + 48, a6), _mm256_storeu_ps(o + 56, a7);
}

// The same for the lanes of `mask` of o[0..8): head sizes that are not a multiple of 64.
static inline void accumulate8(const float* prob, const float* v, int64_t ld, int64_t t0, int64_t t1,
                               __m256i mask, float* o) {
    __m256 a = _mm256_maskload_ps(o, mask);
    const float* vt = v + t0 * ld;
    for (int64_t t = t0; t < t1; ++t, vt += ld)
        a = _mm256_fmadd_ps(_mm256_broadcast_ss(prob + t), _mm256_maskload_ps(vt, mask), a);
    _mm256_maskstore_ps(o, mask, a);
}

// Keys per chunk of the weighted sum: 64 rows of v for 64 channels are 16 KB, which stay in
// L1 while every query row of the block whose window covers them uses them.
constexpr int64_t kValueChunk = 64;

void block_products(const float* x, int64_t rows, int64_t dk, const float* m, int64_t ldm, int64_t col0,
                    int64_t col1, float* out, int64_t ldo) {
    // Columns outside, rows inside: a tile's dk x 24 columns of m stay in L1 for all rows.
    for (int64_t col = col0; col < col1; col += kTileColumns) {
        int64_t r = 0;
        for (; r + 4 <= rows; r += 4) tile4x24(x + r * dk, dk, m + col, ldm, out + r * ldo + col, ldo);
        if (r < rows) tile2x24(x + r * dk, dk, m + col, ldm, out + r * ldo + col, ldo);
    }
}

void block_weighted_sums(const BlockRows& rows, const float* prob, int64_t ldp, const float* v, int64_t ld,
                         int64_t dk, float* out, int64_t ldo) {
    int64_t span_begin = rows.begin[0], span_end = rows.end[0];
    for (int64_t r = 0; r < rows.n; ++r) {
        for (int64_t c = 0; c < dk; ++c) out[r * ldo + c] = 0.0f;
        span_begin = rows.begin[r] < span_begin ? rows.begin[r] : span_begin;
        span_end = rows.end[r] > span_end ? rows.end[r] : span_end;
    }
    const __m256i all = vec::tail_mask(8), tail = vec::tail_mask(dk % 8);
    for (int64_t tc = span_begin; tc < span_end; tc += kValueChunk) {
        const int64_t tc_end = tc + kValueChunk < span_end ? tc + kValueChunk : span_end;
        for (int64_t r = 0; r < rows.n; ++r) {
            const int64_t t0 = tc > rows.begin[r] ? tc : rows.begin[r];
            const int64_t t1 = tc_end < rows.end[r] ? tc_end : rows.end[r];
            if (t0 >= t1) continue;
            const float* pr = prob + r * ldp;
            float* o = out + r * ldo;
            int64_t c = 0;
            for (; c + 64 <= dk; c += 64) accumulate64(pr, v + c, ld, t0, t1, o + c);
            for (; c + 8 <= dk; c += 8) accumulate8(pr, v + c, ld, t0, t1, all, o + c);
            if (c < dk) accumulate8(pr, v + c, ld, t0, t1, tail, o + c);
        }
    }
}

}  // namespace

void add_attention_local_rel_pos_avx2(KernelTable& t) {
    t.attention.local_block_products = block_products;
    t.attention.local_block_weighted_sums = block_weighted_sums;
}

}  // namespace pk::kernels
