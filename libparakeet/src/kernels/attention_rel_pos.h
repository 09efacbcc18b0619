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
// Work is split by (head, query row): each output row is computed by one thread in a fixed
// order, so results do not depend on the team size.
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

}  // namespace pk::kernels
