// Local (banded) multi-head self-attention with relative-position scores, as NeMo 3.0.0's
// RelPositionMultiHeadAttentionLongformer computes it in eval mode for one unpadded sequence
// with no global tokens (att_context_size [left, right], "rel_pos_local_attn"). Cost and
// memory are O(T * (left + right)) instead of the O(T^2) of rel_pos_attention.
//
// For head h (dk = head size), query frame i, key frame j, offset o = j - i, L = left,
// R = right, w = max(L, R):
//   keys:  0 <= j < T and -L <= o <= R (NeMo masks the others to -10000 / -inf, which the
//          softmax turns into exact zeros in float32, since o = 0 is always valid)
//   score = ((q_i + u_h) · k_j + pos(o)) / sqrt(dk)
//   out_i = sum_j softmax_j(score) · v_j
// NeMo builds a [T, 2w + 1] band whose column c = o + w, and adds the position products
// bd_m = (q_i + v_h) · p_m as `ac[..., :L] += bd[..., :L]` and `ac[..., -(R+1):] += bd[..., L:]`:
//   pos(o) = bd_{o + w}           when o + w < L
//          = bd_{o + L + R - w}   when o >= w - R
//          = 0                    otherwise.
// With L == R this is bd_{L + o}, the Transformer-XL term for relative position i - j. With
// L != R it is NeMo's quirk, reproduced as is (for [64, 32], offsets 0..31 get no position
// term and offset 32 gets p row L, relative position 0).
//
// Work is split by (head, block of query rows); every output row is computed by one thread
// in a fixed order that depends only on the row, so results do not depend on the team size
// nor on how the caller chunks the rows.
#pragma once

#include <cstdint>

#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::kernels {

struct KernelTable;

// q: rows [row0, row0 + rows) of the queries, [rows, H*dk] (row r of q is query frame row0 + r);
// k, v: all T frames, [T, H*dk]; p: [left + right + 1, H*dk], the linear_pos projection of NeMo's
// LocalAttRelPositionalEncoding rows (relative positions left, left-1, ..., -right);
// bias_u, bias_v: [H, dk]; out: [rows, H*dk] (must not overlap inputs).
// Requires max(left, right) > 0, left >= 0, right >= 0, 0 <= row0, row0 + rows <= T.
// Scratch comes from `arena`, O(team.size() * (row block + left + right) * dk) floats (never
// O(T*T) nor an extra O(T*d) buffer), and is given back before returning. The products and
// the softmax are kt's kernels (kernel_table.h).
void local_rel_pos_attention(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q,
                             const float* k, const float* v, const float* p, const float* bias_u,
                             const float* bias_v, int64_t T, int64_t row0, int64_t rows, int64_t H,
                             int64_t dk, int64_t left, int64_t right, float* out);

}  // namespace pk::kernels
