// Multi-head self-attention with Transformer-XL relative-position scores, as NeMo's
// RelPositionMultiHeadAttention computes it in eval mode (no mask: one unpadded sequence).
//
// For head h (dk = head size), query frame i and key frame j:
//   score = ((q_i + u_h) · k_j + (q_i + v_h) · p_{T-1-i+j}) / sqrt(dk)
//   out_i = sum_j softmax_j(score) · v_j
// where p_r is the projected positional embedding of relative position (T-1-r), i.e. p holds
// positions T-1, T-2, ..., -(T-1) in its 2T-1 rows. Indexing p this way is exactly NeMo's
// rel_shift of the [T, 2T-1] position score matrix followed by the slice to T columns.
//
// Work is split by (head, block of query rows): each output row is computed by one thread in a
// fixed order, so results do not depend on the team size. A thread transposes the keys and
// positions of each head it works on into its own scratch (at most one head of a sequence is
// transposed by two threads).
#pragma once

#include <cstdint>

#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::kernels {

struct KernelTable;

// q, k, v: [T, H * dk] (head h in columns h*dk .. h*dk+dk-1); p: [2T - 1, H * dk];
// bias_u, bias_v: [H, dk]; out: [T, H * dk], must not overlap the inputs.
// Scratch comes from `arena` and is given back before returning. The products and the softmax
// are kt's kernels (kernel_table.h).
void rel_pos_attention(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q,
                       const float* k, const float* v, const float* p, const float* bias_u,
                       const float* bias_v, int64_t T, int64_t H, int64_t dk, float* out);

// One sequence of rel_pos_attention_batch: its q, k, v, p, T and out as rel_pos_attention takes them.
struct RelPosSequence {
    const float* q;
    const float* k;
    const float* v;
    const float* p;
    int64_t T;
    float* out;
};

// rel_pos_attention of n independent sequences (a batch of short utterances) in one dispatch:
// their (head, query rows) items are split by their work across the team, where short
// sequences alone would each pay the team's synchronisation and leave a thread idle. Every
// output row is computed as rel_pos_attention computes it, so each sequence gets the bits it
// gets alone. The sequences' outs must not overlap any input.
void rel_pos_attention_batch(const KernelTable& kt, ThreadTeam& team, Arena& arena, const RelPosSequence* seqs,
                             int64_t n, const float* bias_u, const float* bias_v, int64_t H, int64_t dk);

}  // namespace pk::kernels
