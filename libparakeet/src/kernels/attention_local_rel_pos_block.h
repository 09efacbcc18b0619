// The two inner loops of local_rel_pos_attention (attention_local_rel_pos.h), one pair per ISA
// level in AttentionKernels (kernel_table.h). The portable driver in attention_local_rel_pos.cpp
// prepares one (head, block of query rows) item at a time — transposed key window and
// positions, biased queries — and calls these for the products; the cheap per-row steps
// between them (position terms, scaling, softmax) are shared portable code.
#pragma once

#include <cstdint>

namespace pk::kernels::local_attention {

// Query rows per work item. A multiple of kRowPad.
constexpr int64_t kRowBlock = 16;
// Products run on groups of kRowPad query rows; the driver pads a block's rows to a multiple.
// Two: a cache-aware streaming step of 160 ms has two query rows, and padding them to more
// would double its products.
constexpr int64_t kRowPad = 2;
// Matrix columns come in tiles that divide kColumnPad; operands are padded to a multiple of it.
constexpr int64_t kColumnPad = 48;

// Row r of a block (r < n) attends to window keys [begin[r], end[r]).
struct BlockRows {
    int64_t n;
    int64_t begin[kRowBlock];
    int64_t end[kRowBlock];
};

// The block's queries of head h with the position biases added: qu[r] = q_r + u_h and
// qv[r] = q_r + v_h for r < rows (q: rows of H*dk floats, ld apart), and zero rows up to
// padded_rows (computed alongside the others by the products, never used).
inline void biased_queries(const float* q, int64_t ld, int64_t h, int64_t dk, int64_t rows, int64_t padded_rows,
                           const float* bias_u, const float* bias_v, float* qu, float* qv) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* qr = q + r * ld + h * dk;
        for (int64_t c = 0; c < dk; ++c) {
            qu[r * dk + c] = qr[c] + bias_u[h * dk + c];
            qv[r * dk + c] = qr[c] + bias_v[h * dk + c];
        }
    }
    for (int64_t i = rows * dk; i < padded_rows * dk; ++i) qu[i] = qv[i] = 0.0f;
}

// out[r * ldo + col] = sum_c x[r * dk + c] * m[c * ldm + col] for r < rows (a multiple of
// kRowPad) and col in [col0, col1), col0 a multiple of kColumnPad. The sum runs over c in order,
// so a value depends only on its row of x and column of m. May also compute columns up to
// the next multiple of kColumnPad past col1 (m's and out's rows must extend that far, with
// finite values in m).
using BlockProductsFn = void (*)(const float* x, int64_t rows, int64_t dk, const float* m, int64_t ldm,
                                 int64_t col0, int64_t col1, float* out, int64_t ldo);

// out[r * ldo + c] = sum over t in [rows.begin[r], rows.end[r]) of prob[r * ldp + t] * v[t * ld + c]
// for c < dk, accumulated over t in order (so a row's result depends only on that row).
using BlockWeightedSumsFn = void (*)(const BlockRows& rows, const float* prob, int64_t ldp, const float* v,
                                     int64_t ld, int64_t dk, float* out, int64_t ldo);

}  // namespace pk::kernels::local_attention
