#include "kernels/attention_windowed_rel_pos.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/attention_local_rel_pos_block.h"
#include "kernels/kernel_table.h"
#include "kernels/ops_grain.h"
#include "kernels/round_up.h"
#include "kernels/transpose.h"

namespace pk::kernels {
namespace {

using local_attention::BlockRows;
using local_attention::kColumnPad;
using local_attention::kRowBlock;
using local_attention::kRowPad;

// The keys a block of query rows [r0, r0 + nr) reads: the union of their windows.
struct Span {
    int64_t begin, end;
};
Span block_span(const int64_t* key_begin, const int64_t* key_end, int64_t r0, int64_t nr) {
    Span s{key_begin[r0], key_end[r0]};
    for (int64_t r = r0 + 1; r < r0 + nr; ++r) s = {std::min(s.begin, key_begin[r]), std::max(s.end, key_end[r])};
    return s;
}

}  // namespace

int64_t positions_stride(int64_t n_pos) { return round_up(n_pos, kColumnPad); }

void transpose_positions(const KernelTable& kt, const float* p, int64_t n_pos, int64_t H, int64_t dk, float* pT) {
    const int64_t ldp = positions_stride(n_pos);
    for (int64_t h = 0; h < H; ++h) transpose_padded(kt, p + h * dk, n_pos, dk, H * dk, pT + h * dk * ldp, ldp);
}

void windowed_rel_pos_attention(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q,
                                int64_t rows, const float* k, const float* v, int64_t n_keys, const float* pT_all,
                                int64_t n_pos, int64_t max_rel, const float* bias_u, const float* bias_v,
                                int64_t H, int64_t dk, int64_t q_offset, const int64_t* key_begin,
                                const int64_t* key_end, float* out) {
    if (rows <= 0) return;
    if (H < 1 || dk < 1) throw std::invalid_argument("windowed_rel_pos_attention: needs H >= 1 and dk >= 1");
    for (int64_t r = 0; r < rows; ++r) {
        if (key_begin[r] < 0 || key_begin[r] >= key_end[r] || key_end[r] > n_keys)
            throw std::invalid_argument("windowed_rel_pos_attention: a row's key window is empty or outside the keys");
        const int64_t qp = q_offset + r;
        // p rows max_rel - (qp - j) for j in the window must exist
        if (max_rel - qp + key_begin[r] < 0 || max_rel - qp + key_end[r] - 1 >= n_pos)
            throw std::invalid_argument("windowed_rel_pos_attention: the positions do not cover a row's window");
    }
    ArenaScope scope(arena);
    const int64_t ld = H * dk;
    const int64_t row_blocks = (rows + kRowBlock - 1) / kRowBlock;
    int64_t widest = 0;
    for (int64_t b = 0; b < row_blocks; ++b) {
        const int64_t r0 = b * kRowBlock;
        const Span s = block_span(key_begin, key_end, r0, std::min(kRowBlock, rows - r0));
        widest = std::max(widest, s.end - s.begin);
    }
    const int64_t ldk = round_up(widest, kColumnPad);
    const int64_t ldp = positions_stride(n_pos);
    // Per thread: the block's transposed keys [dk, ldk], the biased queries, the content
    // [kRowBlock, ldk] and position [kRowBlock, ldp] scores. (The weighted sums read the values
    // where they are.)
    const int64_t per_thread = dk * ldk + 2 * kRowBlock * dk + kRowBlock * (ldk + ldp);
    float* scratch = arena.alloc_array<float>(static_cast<size_t>(team.size() * per_thread));

    const float inv_scale = 1.0f / std::sqrt(static_cast<float>(dk));
    const int64_t items = H * row_blocks;
    const int64_t grain = grain_for(3 * kRowBlock * (widest + n_pos) * dk);
    split_items(team, items, grain, [&](int ith, int64_t item_begin, int64_t item_end) {
        float* kT = scratch + ith * per_thread;
        float* qu = kT + dk * ldk;
        float* qv = qu + kRowBlock * dk;
        float* ac = qv + kRowBlock * dk;
        float* bd = ac + kRowBlock * ldk;
        for (int64_t item = item_begin; item < item_end; ++item) {
            const int64_t h = item / row_blocks;
            const int64_t r0 = (item % row_blocks) * kRowBlock;
            const int64_t nr = std::min(kRowBlock, rows - r0);
            const int64_t padded_rows = round_up(nr, kRowPad);
            const float* pT = pT_all + h * dk * ldp;
            const Span s = block_span(key_begin, key_end, r0, nr);
            const int64_t nwin = s.end - s.begin;
            transpose_padded(kt, k + s.begin * ld + h * dk, nwin, dk, ld, kT, ldk);
            local_attention::biased_queries(q + r0 * ld, ld, h, dk, nr, padded_rows, bias_u, bias_v, qu, qv);

            // Each row's window relative to the block's span, and the p rows the block uses.
            BlockRows block{};
            block.n = nr;
            int64_t m_begin = n_pos, m_end = 0;
            for (int64_t r = 0; r < nr; ++r) {
                const int64_t qp = q_offset + r0 + r;
                block.begin[r] = key_begin[r0 + r] - s.begin;
                block.end[r] = key_end[r0 + r] - s.begin;
                m_begin = std::min(m_begin, max_rel - qp + key_begin[r0 + r]);
                m_end = std::max(m_end, max_rel - qp + key_end[r0 + r]);
            }
            const AttentionKernels& a = kt.attention;
            a.local_block_products(qu, padded_rows, dk, kT, ldk, 0, nwin, ac, ldk);
            a.local_block_products(qv, padded_rows, dk, pT, ldp, m_begin / kColumnPad * kColumnPad, m_end, bd, ldp);

            for (int64_t r = 0; r < nr; ++r) {
                const int64_t qp = q_offset + r0 + r;
                float* row = ac + r * ldk + block.begin[r];
                const float* bdr = bd + r * ldp + (max_rel - qp + key_begin[r0 + r]);  // p row of the first key
                const int64_t n = block.end[r] - block.begin[r];
                for (int64_t t = 0; t < n; ++t) row[t] = (row[t] + bdr[t]) * inv_scale;
                kt.ops.softmax_rows(row, 1, n, row);
            }
            a.local_block_weighted_sums(block, ac, ldk, v + s.begin * ld + h * dk, ld, dk, out + r0 * ld + h * dk, ld);
        }
    });
}

}  // namespace pk::kernels
