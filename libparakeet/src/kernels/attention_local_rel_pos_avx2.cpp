// AVX2/FMA inner loops of the local attention (contracts in attention_local_rel_pos_block.h).
// Intrinsics keep the accumulators in registers: product tiles of 4 (or 2) query rows x 24
// columns (12 ymm accumulators), and 64 output channels per pass of the weighted sum. No std::
// templates here: an out-of-line copy compiled with AVX2 could be picked for portable code
// (the loops' templates of attention_local_rel_pos_loops.h get this file's own lambdas).
#include <immintrin.h>

#include <cstdint>

#include "kernels/attention_local_rel_pos_loops.h"
#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx2.h"

// The row loops must be unrolled for the accumulator arrays to live in registers (as in
// attention_rel_pos_avx512.cpp).
#define PK_UNROLL_ROWS _Pragma("GCC unroll 4")

namespace pk::kernels {
namespace {

using namespace local_attention;

constexpr int64_t kTileColumns = 24;
static_assert(kColumnPad % kTileColumns == 0, "tiles must not pass the operands' padding");

// out[r][0..24) = sum_c x[r][c] * m[c][0..24) for r < R (rows dk apart in x, ldo in out): 3
// vectors of accumulators per row, plus the three column vectors and a broadcast, fit the 16
// ymm registers for R = 4; each column vector loaded is used by R rows.
template <int R>
inline void tile(const float* x, int64_t dk, const float* m, int64_t ldm, float* out, int64_t ldo) {
    __m256 a0[R], a1[R], a2[R];
    PK_UNROLL_ROWS
    for (int r = 0; r < R; ++r) a0[r] = a1[r] = a2[r] = _mm256_setzero_ps();
    for (int64_t c = 0; c < dk; ++c, m += ldm) {
        const __m256 m0 = _mm256_loadu_ps(m), m1 = _mm256_loadu_ps(m + 8), m2 = _mm256_loadu_ps(m + 16);
        PK_UNROLL_ROWS
        for (int r = 0; r < R; ++r) {
            const __m256 b = _mm256_broadcast_ss(x + r * dk + c);
            a0[r] = _mm256_fmadd_ps(b, m0, a0[r]), a1[r] = _mm256_fmadd_ps(b, m1, a1[r]);
            a2[r] = _mm256_fmadd_ps(b, m2, a2[r]);
        }
    }
    PK_UNROLL_ROWS
    for (int r = 0; r < R; ++r)
        _mm256_storeu_ps(out + r * ldo, a0[r]), _mm256_storeu_ps(out + r * ldo + 8, a1[r]),
            _mm256_storeu_ps(out + r * ldo + 16, a2[r]);
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

void block_products(const float* x, int64_t rows, int64_t dk, const float* m, int64_t ldm, int64_t col0,
                    int64_t col1, float* out, int64_t ldo) {
    products_by_tiles(
        kTileColumns, x, rows, dk, m, col0, col1, out, ldo,
        [&](const float* xr, const float* mc, float* o) { tile<4>(xr, dk, mc, ldm, o, ldo); },
        [&](const float* xr, const float* mc, float* o) { tile<2>(xr, dk, mc, ldm, o, ldo); });
}

void block_weighted_sums(const BlockRows& rows, const float* prob, int64_t ldp, const float* v, int64_t ld,
                         int64_t dk, float* out, int64_t ldo) {
    const __m256i all = vec::tail_mask(8), tail = vec::tail_mask(dk % 8);
    weighted_sums_by_chunks(rows, prob, ldp, dk, out, ldo, [&](const float* pr, int64_t t0, int64_t t1, float* o) {
        int64_t c = 0;
        for (; c + 64 <= dk; c += 64) accumulate64(pr, v + c, ld, t0, t1, o + c);
        for (; c + 8 <= dk; c += 8) accumulate8(pr, v + c, ld, t0, t1, all, o + c);
        if (c < dk) accumulate8(pr, v + c, ld, t0, t1, tail, o + c);
    });
}

}  // namespace

void add_attention_local_rel_pos_avx2(KernelTable& t) {
    t.attention.local_block_products = block_products;
    t.attention.local_block_weighted_sums = block_weighted_sums;
}

}  // namespace pk::kernels
