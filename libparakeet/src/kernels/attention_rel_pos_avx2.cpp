// AVX2/FMA attention for a block of query rows (see attention_rel_pos.h for the maths).
// Written with intrinsics so the accumulators stay in registers: 32 key frames per score
// block (8 ymm accumulators for the content and position terms) and 64 output channels per
// pass of the weighted sum. Lanes past the end of a block are masked.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/kernel_table.h"

namespace pk::kernels {
namespace {

// Mask with the first n (0..8) lanes set.
static inline __m256i lane_mask(int64_t n) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
}

static inline __m256 load_n(const float* p, int64_t n) {
    return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, lane_mask(n));
}

// scores[j0 .. j0+32) for one query row: the common case, fully unrolled so the eight
// accumulators stay in registers.
static inline void score_block32(const float* kT, const float* p_row0, int64_t T, int64_t p_ld, int64_t dk,
                                 const float* qu, const float* qv, int64_t j0, float inv_scale, float* scores) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    const float* kr = kT + j0;
    const float* pr = p_row0 + j0;
    for (int64_t c = 0; c < dk; ++c, kr += T, pr += p_ld) {
        const __m256 quc = _mm256_broadcast_ss(qu + c * kRelPosRowBlock);
        const __m256 qvc = _mm256_broadcast_ss(qv + c * kRelPosRowBlock);
        a0 = _mm256_fmadd_ps(quc, _mm256_loadu_ps(kr), a0);
        a1 = _mm256_fmadd_ps(quc, _mm256_loadu_ps(kr + 8), a1);
        a2 = _mm256_fmadd_ps(quc, _mm256_loadu_ps(kr + 16), a2);
        a3 = _mm256_fmadd_ps(quc, _mm256_loadu_ps(kr + 24), a3);
        b0 = _mm256_fmadd_ps(qvc, _mm256_loadu_ps(pr), b0);
        b1 = _mm256_fmadd_ps(qvc, _mm256_loadu_ps(pr + 8), b1);
        b2 = _mm256_fmadd_ps(qvc, _mm256_loadu_ps(pr + 16), b2);
        b3 = _mm256_fmadd_ps(qvc, _mm256_loadu_ps(pr + 24), b3);
    }
    const __m256 s = _mm256_set1_ps(inv_scale);
    _mm256_storeu_ps(scores + j0, _mm256_mul_ps(_mm256_add_ps(a0, b0), s));
    _mm256_storeu_ps(scores + j0 + 8, _mm256_mul_ps(_mm256_add_ps(a1, b1), s));
    _mm256_storeu_ps(scores + j0 + 16, _mm256_mul_ps(_mm256_add_ps(a2, b2), s));
    _mm256_storeu_ps(scores + j0 + 24, _mm256_mul_ps(_mm256_add_ps(a3, b3), s));
}

// scores[j0 .. j0+n) for one query row, n <= 32: the last, partial block. Same arithmetic per
// lane as score_block32.
static inline void score_block(const float* kT, const float* p_row0, int64_t T, int64_t p_ld, int64_t dk,
                               const float* qu, const float* qv, int64_t j0, int64_t n, float inv_scale,
                               float* scores) {
    __m256 ac[4], bd[4];
    int64_t lanes[4];
    for (int v = 0; v < 4; ++v) {
        ac[v] = _mm256_setzero_ps();
        bd[v] = _mm256_setzero_ps();
        const int64_t left = n - 8 * v;
        lanes[v] = left < 0 ? 0 : (left > 8 ? 8 : left);
    }
    const int nv = static_cast<int>((n + 7) / 8);
    for (int64_t c = 0; c < dk; ++c) {
        const __m256 quc = _mm256_broadcast_ss(qu + c * kRelPosRowBlock);
        const __m256 qvc = _mm256_broadcast_ss(qv + c * kRelPosRowBlock);
        const float* kr = kT + c * T + j0;
        const float* pr = p_row0 + c * p_ld + j0;
        for (int v = 0; v < nv; ++v) {
            ac[v] = _mm256_fmadd_ps(quc, load_n(kr + 8 * v, lanes[v]), ac[v]);
            bd[v] = _mm256_fmadd_ps(qvc, load_n(pr + 8 * v, lanes[v]), bd[v]);
        }
    }
    const __m256 s = _mm256_set1_ps(inv_scale);
    for (int v = 0; v < nv; ++v) {
        const __m256 r = _mm256_mul_ps(_mm256_add_ps(ac[v], bd[v]), s);
        if (lanes[v] == 8) _mm256_storeu_ps(scores + j0 + 8 * v, r);
        else _mm256_maskstore_ps(scores + j0 + 8 * v, lane_mask(lanes[v]), r);
    }
}

// out[c0 .. c0+w) = sum_j scores[j] * v[j][c0 ..], w < 64 and a multiple of 8.
static inline void weighted_sum_block(const float* scores, const float* v, int64_t ld, int64_t T, int64_t c0,
                                      int64_t w, float* out) {
    __m256 acc[8];
    const int nv = static_cast<int>(w / 8);
    for (int i = 0; i < 8; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t j = 0; j < T; ++j) {
        const __m256 wj = _mm256_broadcast_ss(scores + j);
        const float* vr = v + j * ld + c0;
        for (int i = 0; i < nv; ++i) acc[i] = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vr + 8 * i), acc[i]);
    }
    for (int i = 0; i < nv; ++i) _mm256_storeu_ps(out + c0 + 8 * i, acc[i]);
}

// out[c0 .. c0+64) += sum over j in [j0, j1) of scores[j] * v[j][c0 ..]; `first` starts
// from zero instead of out. Accumulation runs over j in order, so splitting [0, T) into
// chunks gives the same bits as one pass.
static inline void weighted_sum_chunk64(const float* scores, const float* v, int64_t ld, int64_t j0, int64_t j1,
                                        int64_t c0, bool first, float* out) {
    float* o = out + c0;
    __m256 a0, a1, a2, a3, a4, a5, a6, a7;
    if (first) {
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = _mm256_setzero_ps();
    } else {
        a0 = _mm256_loadu_ps(o), a1 = _mm256_loadu_ps(o + 8), a2 = _mm256_loadu_ps(o + 16);
        a3 = _mm256_loadu_ps(o + 24), a4 = _mm256_loadu_ps(o + 32), a5 = _mm256_loadu_ps(o + 40);
        a6 = _mm256_loadu_ps(o + 48), a7 = _mm256_loadu_ps(o + 56);
    }
    const float* vr = v + j0 * ld + c0;
    for (int64_t j = j0; j < j1; ++j, vr += ld) {
        const __m256 wj = _mm256_broadcast_ss(scores + j);
        a0 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vr), a0);
        a1 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vr + 8), a1);
        a2 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vr + 16), a2);
        a3 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vr + 24), a3);
        a4 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vr + 32), a4);
        a5 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vr + 40), a5);
        a6 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vr + 48), a6);
        a7 = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vr + 56), a7);
    }
    _mm256_storeu_ps(o, a0);
    _mm256_storeu_ps(o + 8, a1);
    _mm256_storeu_ps(o + 16, a2);
    _mm256_storeu_ps(o + 24, a3);
    _mm256_storeu_ps(o + 32, a4);
    _mm256_storeu_ps(o + 40, a5);
    _mm256_storeu_ps(o + 48, a6);
    _mm256_storeu_ps(o + 56, a7);
}

// Key frames per chunk of the weighted sum: 64 rows of v for 64 channels are 16 KB, which
// stay in L1 while every query row of the block uses them.
constexpr int64_t kValueChunk = 64;

// AttentionKernels::rel_pos_scores. Looping over the rows inside each key block keeps that
// block of keys and positions in L1 for all of them (one row at a time streams the whole
// head from L2 per row).
void scores_rows(const float* kT, const float* pT, int64_t T, int64_t dk, int64_t i0, int64_t nr,
                 const float* qu, const float* qv, float* scores) {
    const float inv_scale = 1.0f / std::sqrt(static_cast<float>(dk));
    const int64_t p_ld = 2 * T - 1;
    int64_t j0 = 0;
    for (; j0 + 32 <= T; j0 += 32)
        for (int64_t r = 0; r < nr; ++r)
            score_block32(kT, pT + (T - 1 - (i0 + r)), T, p_ld, dk, qu + r, qv + r, j0, inv_scale,
                          scores + r * T);
    if (j0 < T)
        for (int64_t r = 0; r < nr; ++r)
            score_block(kT, pT + (T - 1 - (i0 + r)), T, p_ld, dk, qu + r, qv + r, j0, T - j0, inv_scale,
                        scores + r * T);
}

// AttentionKernels::rel_pos_weighted_sums.
void weighted_sums_rows(const float* scores, const float* v, int64_t ld, int64_t T, int64_t dk,
                        int64_t nr, float* out) {
    const int64_t vec_channels = dk / 8 * 8;
    for (int64_t r = 0; r < nr; ++r) {
        // Channels past the last multiple of 64 (small or odd head sizes).
        int64_t c0 = vec_channels / 64 * 64;
        if (c0 < vec_channels) weighted_sum_block(scores + r * T, v, ld, T, c0, vec_channels - c0, out + r * ld);
        for (int64_t c = vec_channels; c < dk; ++c) {
            float acc = 0.0f;
            for (int64_t j = 0; j < T; ++j) acc += scores[r * T + j] * v[j * ld + c];
            out[r * ld + c] = acc;
        }
    }
    for (int64_t jc = 0; jc < T; jc += kValueChunk) {
        const int64_t jend = T - jc < kValueChunk ? T : jc + kValueChunk;
        for (int64_t r = 0; r < nr; ++r)
            for (int64_t c0 = 0; c0 + 64 <= vec_channels; c0 += 64)
                weighted_sum_chunk64(scores + r * T, v, ld, jc, jend, c0, jc == 0, out + r * ld);
    }
}

}  // namespace

void add_attention_rel_pos_avx2(KernelTable& t) {
    t.attention.rel_pos_scores = scores_rows;
    t.attention.rel_pos_weighted_sums = weighted_sums_rows;
}

}  // namespace pk::kernels
