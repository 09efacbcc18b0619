// Multi-head self-attention with Transformer-XL relative-position scores where each query row
// sees its own window of keys: NeMo's RelPositionMultiHeadAttention under an attention mask that
// leaves every row a contiguous run of visible keys. That is the chunked_limited mask of the
// cache-aware streaming models, offline (a frame sees its chunk and the L frames before it) and
// in a streaming step (the chunk's frames see the attention cache and the chunk).
//
// For head h (dk = head size), query row r at key-sequence position qp = q_offset + r, and key j
// in [key_begin[r], key_end[r]):
//   score = ((q_r + u_h) · k_j + (q_r + v_h) · p(qp - j)) / sqrt(dk)
//   out_r = sum_j softmax_j(score) · v_j
// where p(rel) is row max_rel - rel of `p`, the projected embeddings of relative positions
// max_rel, max_rel - 1, ... NeMo fills the masked scores with -10000 before the softmax; their
// exponentials are exact zeros in float32 (every row sees at least one key), so leaving them out
// gives the same probabilities.
//
// Work is split by (head, block of query rows) and each row is computed by one thread in a fixed
// order that depends only on the row, so results do not depend on the team size. The products
// are the local attention's block kernels (attention_local_rel_pos_block.h) of `kt`.
#pragma once

#include <cstdint>

#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::kernels {

struct KernelTable;

// The positions as the attention reads them: p [n_pos, H*dk] transposed head by head,
// pT[(h * dk + c) * positions_stride(n_pos) + i] = p[i * H*dk + h * dk + c], the padding zero.
// Made once for positions that many calls share (a stream's steps reuse its context's).
int64_t positions_stride(int64_t n_pos);
void transpose_positions(const KernelTable& kt, const float* p, int64_t n_pos, int64_t H, int64_t dk, float* pT);

// q: [rows, H*dk]; k, v: [n_keys, H*dk]; pT: transpose_positions of p [n_pos, H*dk], the
// projected relative positions max_rel down to max_rel - n_pos + 1, which must cover
// q_offset + r - j for every visible (r, j); bias_u, bias_v: [H, dk]; key_begin / key_end: per
// query row, 0 <= begin < end <= n_keys; out: [rows, H*dk] (must not overlap the inputs).
// Scratch comes from `arena`.
void windowed_rel_pos_attention(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q,
                                int64_t rows, const float* k, const float* v, int64_t n_keys, const float* pT,
                                int64_t n_pos, int64_t max_rel, const float* bias_u, const float* bias_v,
                                int64_t H, int64_t dk, int64_t q_offset, const int64_t* key_begin,
                                const int64_t* key_end, float* out);

}  // namespace pk::kernels
