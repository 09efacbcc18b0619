#include "kernels/attention_rel_pos.h"

#include <algorithm>
#include <cmath>
#include <vector>

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
        float* s = scores + r * T;
        for (int64_t j0 = 0; j0 < T; j0 += kKeyBlock) {
            const int64_t n = T - j0 < kKeyBlock ? T - j0 : kKeyBlock;
            float ac[kKeyBlock] = {};
            float bd[kKeyBlock] = {};
            for (int64_t c = 0; c < dk; ++c) {
                const float* kr = kT + c * T + j0;
                const float* pr = p_row0 + c * p_ld + j0;
                const float quc = qu[c * kRelPosRowBlock + r], qvc = qv[c * kRelPosRowBlock + r];
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
constexpr int64_t kRowBlock = kRelPosRowBlock;

}  // namespace

void add_attention_rel_pos_scalar(KernelTable& t) {
    t.attention.rel_pos_scores = scores_rows_scalar;
    t.attention.rel_pos_weighted_sums = weighted_sums_rows_scalar;
}

void rel_pos_attention(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q,
                       const float* k, const float* v, const float* p, const float* bias_u,
                       const float* bias_v, int64_t T, int64_t H, int64_t dk, float* out) {
    const RelPosSequence one{q, k, v, p, T, out};
    rel_pos_attention_batch(kt, team, arena, &one, 1, bias_u, bias_v, H, dk);
}

void rel_pos_attention_batch(const KernelTable& kt, ThreadTeam& team, Arena& arena, const RelPosSequence* seqs,
                             int64_t n, const float* bias_u, const float* bias_v, int64_t H, int64_t dk) {
    ArenaScope scope(arena);
    const int64_t ld = H * dk;
    // Per sequence: its first item and the work before it (an item of a sequence of T frames:
    // about 3 * kRowBlock * T * dk multiply-adds).
    std::vector<int64_t> item_at(static_cast<size_t>(n) + 1, 0), work_at(static_cast<size_t>(n) + 1, 0);
    int64_t longest = 0;
    for (int64_t s = 0; s < n; ++s) {
        const int64_t T = std::max<int64_t>(0, seqs[s].T), items = H * ((T + kRowBlock - 1) / kRowBlock);
        item_at[s + 1] = item_at[s] + items;
        work_at[s + 1] = work_at[s] + items * 3 * kRowBlock * T * dk;
        longest = std::max(longest, T);
    }
    if (item_at[n] == 0) return;
    const int nth = team.size();
    // Per thread: the head it is on, its keys and positions transposed ([dk, T] and [dk, 2T-1]:
    // made when the thread reaches the head, so they are still in its cache while it works on
    // them), the scores of one block of query rows and their two biased queries.
    const int64_t per_thread = dk * (3 * longest - 1) + kRowBlock * (longest + 2 * dk);
    float* scratch = arena.alloc_array<float>(static_cast<size_t>(nth * per_thread));

    // The items of all sequences in order, (sequence, head, block of query rows), cut into
    // equal shares of work: a share starts at the first item whose work starts at or past its start.
    const int64_t total_work = work_at[n];
    const int64_t chunks = std::clamp<int64_t>((total_work + 16383) / 16384, 1, nth);
    auto item_from = [&](int64_t work) {
        const int64_t s = std::upper_bound(work_at.begin(), work_at.end(), work) - work_at.begin() - 1;
        if (s >= n) return item_at[n];
        const int64_t per_item = (work_at[s + 1] - work_at[s]) / (item_at[s + 1] - item_at[s]);
        return item_at[s] + (work - work_at[s] + per_item - 1) / per_item;
    };
    team.run([&](int ith, int) {
        if (ith >= chunks) return;
        const int64_t begin = item_from(total_work * ith / chunks), end = item_from(total_work * (ith + 1) / chunks);
        float* kT = scratch + ith * per_thread;
        float* pT = kT + dk * longest;
        float* scores = pT + dk * (2 * longest - 1);
        float* qu = scores + kRowBlock * longest;
        float* qv = qu + kRowBlock * dk;
        int64_t si = std::upper_bound(item_at.begin(), item_at.end(), begin) - item_at.begin() - 1;
        int64_t transposed = -1;  // the (sequence, head) in kT and pT, as si * H + h
        for (int64_t item = begin; item < end; ++item) {
            while (item >= item_at[si + 1]) ++si;
            const RelPosSequence& s = seqs[si];
            const int64_t T = s.T, P = 2 * T - 1, row_blocks = (T + kRowBlock - 1) / kRowBlock;
            const int64_t h = (item - item_at[si]) / row_blocks;
            const int64_t i0 = ((item - item_at[si]) % row_blocks) * kRowBlock;
            const int64_t nr = std::min(kRowBlock, T - i0);
            if (transposed != si * H + h) {
                transpose_padded(kt, s.k + h * dk, T, dk, ld, kT, T);
                transpose_padded(kt, s.p + h * dk, P, dk, ld, pT, P);
                transposed = si * H + h;
            }
            // The block's biased queries, channel-major; rows past the sequence's end stay zero.
            transpose_padded(kt, s.q + i0 * ld + h * dk, nr, dk, ld, qu, kRowBlock);
            for (int64_t c = 0; c < dk; ++c) {
                float* u = qu + c * kRowBlock;
                float* w = qv + c * kRowBlock;
                const float bu = bias_u[h * dk + c], bv = bias_v[h * dk + c];
                for (int64_t r = 0; r < nr; ++r) {
                    w[r] = u[r] + bv;
                    u[r] += bu;
                }
                std::fill(w + nr, w + kRowBlock, 0.0f);
            }
            kt.attention.rel_pos_scores(kT, pT, T, dk, i0, nr, qu, qv, scores);
            kt.ops.softmax_rows(scores, nr, T, scores);
            kt.attention.rel_pos_weighted_sums(scores, s.v + h * dk, ld, T, dk, nr, s.out + i0 * ld + h * dk);
        }
    });
}

}  // namespace pk::kernels
