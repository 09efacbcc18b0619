#include "kernels/attention_local_rel_pos.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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

// ---- Portable path: plain loops (the contracts are in attention_local_rel_pos_block.h). ----

void block_products_portable(const float* x, int64_t rows, int64_t dk, const float* m, int64_t ldm, int64_t col0,
                             int64_t col1, float* out, int64_t ldo) {
    for (int64_t r = 0; r < rows; ++r) {
        float* o = out + r * ldo;
        for (int64_t col = col0; col < col1; ++col) o[col] = 0.0f;
        for (int64_t c = 0; c < dk; ++c) {
            const float xc = x[r * dk + c];
            const float* mc = m + c * ldm;
            for (int64_t col = col0; col < col1; ++col) o[col] += xc * mc[col];
        }
    }
}

void block_weighted_sums_portable(const BlockRows& rows, const float* prob, int64_t ldp, const float* v,
                                  int64_t ld, int64_t dk, float* out, int64_t ldo) {
    for (int64_t r = 0; r < rows.n; ++r) {
        float* o = out + r * ldo;
        for (int64_t c = 0; c < dk; ++c) o[c] = 0.0f;
        for (int64_t t = rows.begin[r]; t < rows.end[r]; ++t) {
            const float w = prob[r * ldp + t];
            const float* vt = v + t * ld;
            for (int64_t c = 0; c < dk; ++c) o[c] += w * vt[c];
        }
    }
}

// The offsets o = j - i in [o_begin, o_end) get the position product of p row o + shift.
// NeMo's band has column c = o + w; `ac[..., :L] += bd[..., :L]` covers c < L and
// `ac[..., -(R+1):] += bd[..., L:]` covers c >= 2w - R (see attention_local_rel_pos.h).
struct PositionSegment {
    int64_t o_begin, o_end, shift;
};

// The part of [o_begin, o_end) of `s` that lies in [lo, hi); empty when begin >= end.
struct Range {
    int64_t begin, end;
};
Range clip(const PositionSegment& s, int64_t lo, int64_t hi) {
    return {std::max(lo, s.o_begin), std::min(hi, s.o_end)};
}

// Row blocks whose key windows one KeySpan serves: the key transposition and value copy
// then cost a few floats per query row instead of a whole window per block.
constexpr int64_t kSpanBlocks = 8;

// One head's keys and values for frames [begin, end), copied once for several row blocks:
// kT [dk, ld] transposed (columns past end - begin zeroed) so the products read keys
// contiguously, and vs [end - begin, dk] as contiguous rows, so the weighted sum's chunk of v
// stays in L1 (rows H * dk floats apart fall into a few cache sets and evict each other).
struct KeySpan {
    float* kT;
    float* vs;
    int64_t ld;
    int64_t head = -1, begin = 0, end = 0;

    // Whether the window [ja, jb) of head h, and the products' padding past it, lie inside.
    bool holds(int64_t h, int64_t ja, int64_t jb) const {
        return h == head && ja >= begin && jb <= end && (ja - begin) + round_up(jb - ja, kColumnPad) <= ld;
    }
    // Frames from ja on (k and v are [T, ldkv], head h in columns h*dk ..).
    void load(const KernelTable& kt, const float* k, const float* v, int64_t ldkv, int64_t dk, int64_t T, int64_t h,
              int64_t ja) {
        head = h, begin = ja, end = std::min(T, ja + ld);
        transpose_padded(kt, k + ja * ldkv + h * dk, end - begin, dk, ldkv, kT, ld);
        for (int64_t t = 0; t < end - begin; ++t) std::copy_n(v + (ja + t) * ldkv + h * dk, dk, vs + t * dk);
    }
};

void check_arguments(int64_t T, int64_t row0, int64_t rows, int64_t H, int64_t dk, int64_t left, int64_t right) {
    if (left < 0 || right < 0 || std::max(left, right) <= 0)
        throw std::invalid_argument("local_rel_pos_attention: needs left, right >= 0 and one of them > 0");
    if (row0 < 0 || rows < 0 || row0 + rows > T)
        throw std::invalid_argument("local_rel_pos_attention: query rows outside [0, T)");
    if (H < 1 || dk < 1) throw std::invalid_argument("local_rel_pos_attention: needs H >= 1 and dk >= 1");
}

}  // namespace

void add_attention_local_rel_pos_scalar(KernelTable& t) {
    t.attention.local_block_products = block_products_portable;
    t.attention.local_block_weighted_sums = block_weighted_sums_portable;
}

void local_rel_pos_attention(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q,
                             const float* k, const float* v, const float* p, const float* bias_u,
                             const float* bias_v, int64_t T, int64_t row0, int64_t rows, int64_t H,
                             int64_t dk, int64_t left, int64_t right, float* out) {
    check_arguments(T, row0, rows, H, dk, left, right);
    if (rows == 0) return;
    ArenaScope scope(arena);
    const int64_t L = left, R = right, w = std::max(L, R), P = L + R + 1, ld = H * dk;
    const PositionSegment segments[2] = {{-L, L - w, w}, {w - R, R + 1, L + R - w}};
    // A block's key window: its rows' frames widened by L before and R after, clipped to [0, T).
    const int64_t ldk = round_up(std::min(T, kRowBlock + L + R), kColumnPad);
    const int64_t ldp = round_up(P, kColumnPad);
    const int64_t lds = round_up(std::min(T, kSpanBlocks * kRowBlock + L + R), kColumnPad);
    // Per thread: a KeySpan (2 * dk * lds), the transposed positions [dk, ldp], the block's
    // biased queries, and its content [kRowBlock, ldk] and position [kRowBlock, ldp] scores.
    const int64_t per_thread = 2 * dk * lds + (dk + kRowBlock) * ldp + kRowBlock * ldk + 2 * kRowBlock * dk;
    float* scratch = arena.alloc_array<float>(static_cast<size_t>(team.size() * per_thread));

    const float inv_scale = 1.0f / std::sqrt(static_cast<float>(dk));
    // One item = one (head, block of kRowBlock query rows): about 3 * kRowBlock * P * dk multiply-adds.
    const int64_t row_blocks = (rows + kRowBlock - 1) / kRowBlock;
    const int64_t items = H * row_blocks;
    const int64_t grain = grain_for(3 * kRowBlock * P * dk);
    split_items(team, items, grain, [&](int ith, int64_t item_begin, int64_t item_end) {
        KeySpan span{scratch + ith * per_thread, scratch + ith * per_thread + dk * lds, lds};
        float* pT = span.vs + dk * lds;
        float* qu = pT + dk * ldp;
        float* qv = qu + kRowBlock * dk;
        float* ac = qv + kRowBlock * dk;
        float* bd = ac + kRowBlock * ldk;
        int64_t pT_head = -1;  // the head whose positions pT holds (a chunk's items go head by head)
        for (int64_t item = item_begin; item < item_end; ++item) {
            const int64_t h = item / row_blocks;
            const int64_t i0 = row0 + (item % row_blocks) * kRowBlock;  // first query frame
            const int64_t nr = std::min(kRowBlock, row0 + rows - i0);
            const int64_t padded_rows = round_up(nr, kRowPad);
            if (h != pT_head) {
                transpose_padded(kt, p + h * dk, P, dk, ld, pT, ldp);
                pT_head = h;
            }
            const int64_t ja = std::max<int64_t>(0, i0 - L);
            const int64_t nwin = std::min(T, i0 + nr + R) - ja;
            if (!span.holds(h, ja, ja + nwin)) span.load(kt, k, v, ld, dk, T, h, ja);
            local_attention::biased_queries(q + (i0 - row0) * ld, ld, h, dk, nr, padded_rows, bias_u, bias_v, qu, qv);

            // Each row's keys, and the p rows that the block's rows use.
            BlockRows block{};
            block.n = nr;
            int64_t m_begin = P, m_end = 0;
            for (int64_t r = 0; r < nr; ++r) {
                const int64_t i = i0 + r;
                block.begin[r] = std::max<int64_t>(0, i - L) - ja;
                block.end[r] = std::min(T, i + R + 1) - ja;
                for (const PositionSegment& s : segments) {
                    const Range o = clip(s, block.begin[r] + ja - i, block.end[r] + ja - i);
                    if (o.begin >= o.end) continue;
                    m_begin = std::min(m_begin, o.begin + s.shift);
                    m_end = std::max(m_end, o.end + s.shift);
                }
            }

            const AttentionKernels& a = kt.attention;
            a.local_block_products(qu, padded_rows, dk, span.kT + (ja - span.begin), lds, 0, nwin, ac, ldk);
            if (m_begin < m_end)
                a.local_block_products(qv, padded_rows, dk, pT, ldp, m_begin / kColumnPad * kColumnPad, m_end, bd, ldp);

            // Scores of each row's keys, then their softmax, in place in ac.
            for (int64_t r = 0; r < nr; ++r) {
                const int64_t i = i0 + r;
                float* s = ac + r * ldk + (i - ja);  // s[o]: the key at offset o
                const float* bdr = bd + r * ldp;
                for (const PositionSegment& seg : segments) {
                    const Range o = clip(seg, block.begin[r] + ja - i, block.end[r] + ja - i);
                    for (int64_t oo = o.begin; oo < o.end; ++oo) s[oo] += bdr[oo + seg.shift];
                }
                float* row = ac + r * ldk + block.begin[r];
                const int64_t n = block.end[r] - block.begin[r];
                for (int64_t t = 0; t < n; ++t) row[t] *= inv_scale;
                kt.ops.softmax_rows(row, 1, n, row);
            }
            a.local_block_weighted_sums(block, ac, ldk, span.vs + (ja - span.begin) * dk, dk, dk,
                                        out + (i0 - row0) * ld + h * dk, ld);
        }
    });
}

}  // namespace pk::kernels
