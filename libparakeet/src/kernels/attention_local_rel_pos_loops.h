// The loops of the local attention's block kernels (attention_local_rel_pos_block.h) around
// their register tiles, shared by the ISA levels: each level's file passes its own tiles, as
// lambdas, so every instantiation is local to that file and compiled with its flags. Include
// only from the ISA files.
#pragma once

#include <cstdint>

#include "kernels/attention_local_rel_pos_block.h"

namespace pk::kernels::local_attention {

// BlockProductsFn by tiles of `columns` columns: tile4(x, m, out) for 4 rows at a time, then
// tile2 for the last 2 (rows is a multiple of kRowPad = 2). Columns outside, rows inside: a
// tile's dk x columns of m stay in L1 for all rows.
static_assert(kRowPad == 2, "tiles of four and two rows cover the rows");
template <class Tile4, class Tile2>
inline void products_by_tiles(int64_t columns, const float* x, int64_t rows, int64_t dk, const float* m,
                              int64_t col0, int64_t col1, float* out, int64_t ldo, const Tile4& tile4,
                              const Tile2& tile2) {
    for (int64_t col = col0; col < col1; col += columns) {
        int64_t r = 0;
        for (; r + 4 <= rows; r += 4) tile4(x + r * dk, m + col, out + r * ldo + col);
        if (r < rows) tile2(x + r * dk, m + col, out + r * ldo + col);
    }
}

// Keys per chunk of the weighted sum: 64 rows of v for 64 channels are 16 KB, which stay in
// L1 while every query row of the block whose window covers them uses them.
constexpr int64_t kValueChunk = 64;

// BlockWeightedSumsFn by chunks of keys: accumulate(prob_row, t0, t1, out_row) adds
// prob_row[t] * v[t] for t in [t0, t1), in order of t, to the dk channels of out_row.
template <class Accumulate>
inline void weighted_sums_by_chunks(const BlockRows& rows, const float* prob, int64_t ldp, int64_t dk, float* out,
                                    int64_t ldo, const Accumulate& accumulate) {
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
            if (t0 < t1) accumulate(prob + r * ldp, t0, t1, out + r * ldo);
        }
    }
}

}  // namespace pk::kernels::local_attention
