#include "kernels/attention_rel_pos.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernel_table.h"
#include "kernels/transpose.h"

namespace pk::kernels {
namespace {

// ---- Portable path: plain loops (the contracts are in kernel_table.h). ----

// Key frames handled per register block.
constexpr int64_t kKeyBlock = 32;

void scores_rows_scalar(const float* kT, const float* pT, int64_t T, int64_t dk, int64_t i0,
                        int64_t nr, const float* qu, const float* qv, float* scores) {
    const float inv_scale = 1.0f / std::sqrt(static_cast<float>(dk));
    const int64_t p_ld = 2 * T - 1;
    for (int64_t r = 0; r < nr; ++r) {
        const float* p_row0 = pT + (T - 1 - (i0 + r));  // column of relative position i - 0
        const float* qur = qu + r * dk;
        const float* qvr = qv + r * dk;
        float* s = scores + r * T;
        for (int64_t j0 = 0; j0 < T; j0 += kKeyBlock) {
            const int64_t n = T - j0 < kKeyBlock ? T - j0 : kKeyBlock;
            float ac[kKeyBlock] = {};
            float bd[kKeyBlock] = {};
            for (int64_t c = 0; c < dk; ++c) {
                const float* kr = kT + c * T + j0;
                const float* pr = p_row0 + c * p_ld + j0;
                const float quc = qur[c], qvc = qvr[c];
                for (int64_t jj = 0; jj < n; ++jj) {
                    ac[jj] += quc * kr[jj];
                    bd[jj] += qvc * pr[jj];
                }
            }
            for (int64_t jj = 0; jj < n; ++jj) s[j0 + jj] = (ac[jj] + bd[jj]) * inv_scale;
        }
    }
}

void weighted_sums_rows_scalar(const float* prob, const float* v, int64_t ld, int64_t T,
                               int64_t dk, int64_t nr, float* out) {
    for (int64_t r = 0; r < nr; ++r) {
        float* o = out + r * ld;
        for (int64_t c = 0; c < dk; ++c) o[c] = 0.0f;
        for (int64_t j = 0; j < T; ++j) {
            const float w = prob[r * T + j];
            const float* vr = v + j * ld;
            for (int64_t c = 0; c < dk; ++c) o[c] += w * vr[c];
        }
    }
}

// Query rows handled together (their score rows share each block of keys in L1).
constexpr int64_t kRowBlock = 8;

}  // namespace

void add_attention_rel_pos_scalar(KernelTable& t) {
    t.attention.rel_pos_scores = scores_rows_scalar;
    t.attention.rel_pos_weighted_sums = weighted_sums_rows_scalar;
}

void rel_pos_attention(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q,
                       const float* k, const float* v, const float* p, const float* bias_u,
                       const float* bias_v, int64_t T, int64_t H, int64_t dk, float* out) {
    if (T <= 0) return;
    ArenaScope scope(arena);
    const int64_t ld = H * dk;
    const int64_t P = 2 * T - 1;
    float* kT = arena.alloc_array<float>(static_cast<size_t>(H * dk * T));
    float* pT = arena.alloc_array<float>(static_cast<size_t>(H * dk * P));
    const int nth = team.size();
    // Per thread: the scores of one block of query rows + their two biased queries.
    const int64_t per_thread = kRowBlock * (T + 2 * dk);
    float* scratch = arena.alloc_array<float>(static_cast<size_t>(nth * per_thread));

    // Transpose each head's keys and positions once (split by head: output-disjoint).
    parallel_for(team, H, 1, [&](int64_t h0, int64_t h1) {
        for (int64_t h = h0; h < h1; ++h) {
            transpose_padded(k + h * dk, T, dk, ld, kT + h * dk * T, T);
            transpose_padded(p + h * dk, P, dk, ld, pT + h * dk * P, P);
        }
    });

    // One item = one (head, block of kRowBlock query rows): about 3 * rows * T * dk multiply-adds.
    const int64_t row_blocks = (T + kRowBlock - 1) / kRowBlock;
    const int64_t items = H * row_blocks;
    const int64_t work = 3 * kRowBlock * T * dk;
    const int64_t grain = (16384 + work - 1) / work;
    team.run([&](int ith, int n_threads) {
        const int64_t chunks = std::min<int64_t>(n_threads, (items + grain - 1) / grain);
        if (ith >= chunks) return;
        const int64_t begin = items * ith / chunks, end = items * (ith + 1) / chunks;
        float* scores = scratch + ith * per_thread;
        float* qu = scores + kRowBlock * T;
        float* qv = qu + kRowBlock * dk;
        for (int64_t item = begin; item < end; ++item) {
            const int64_t h = item / row_blocks;
            const int64_t i0 = (item % row_blocks) * kRowBlock;
            const int64_t nr = std::min(kRowBlock, T - i0);
            for (int64_t r = 0; r < nr; ++r) {
                const float* qi = q + (i0 + r) * ld + h * dk;
                for (int64_t c = 0; c < dk; ++c) {
                    qu[r * dk + c] = qi[c] + bias_u[h * dk + c];
                    qv[r * dk + c] = qi[c] + bias_v[h * dk + c];
                }
            }
            const float* kTh = kT + h * dk * T;
            const float* pTh = pT + h * dk * P;
            const float* vh = v + h * dk;
            float* oi = out + i0 * ld + h * dk;
            kt.attention.rel_pos_scores(kTh, pTh, T, dk, i0, nr, qu, qv, scores);
            kt.ops.softmax_rows(scores, nr, T, scores);
            kt.attention.rel_pos_weighted_sums(scores, vh, ld, T, dk, nr, oi);
        }
    });
}

}  // namespace pk::kernels
