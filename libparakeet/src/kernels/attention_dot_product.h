// Multi-head scaled dot-product self-attention with neither mask nor positions, as a ViT block
// computes it in eval mode (timm's Attention, PyTorch's scaled_dot_product_attention): for
// head h (dk = head size), query row i and key row j,
//   score = (q_i · k_j) * scale,   out_i = sum_j softmax_j(score) · v_j.
//
// One job for all the heads: each thread takes whole (head, block of query rows) items, keeps
// its head's keys transposed and its values contiguous, and runs the products on the level's
// attention kernels, whose contracts are general: the scores on the local attention's block
// products (AttentionKernels::local_block_products), the weighted sums on the full
// attention's (rel_pos_weighted_sums: several query rows share each load of values, as all
// rows here take every key), with the softmax between them. Every output row is computed by one
// thread in a fixed order, so results do not depend on the team size.
//
// AttentionProducts::Int8Bf16 runs the scores on int8 queries and keys (each with its own scale)
// and the weighted sums on bfloat16 values and weights instead (attention_dot_product_int8_bf16.h):
// about 1.7 times faster (CED-base on Zen 5), for about the precision of Q8_0 activations. For
// models whose weights are already quantised; f32 models keep F32.
#pragma once

#include <cstdint>

#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::kernels {

struct KernelTable;

enum class AttentionProducts { F32, Int8Bf16 };

// Whether kt can run AttentionProducts::Int8Bf16 on this CPU (its avx512 level, with AVX512_BF16).
bool int8_bf16_attention_available(const KernelTable& kt);

// q, k, v: T rows each, ld floats apart (head h in columns h*dk .. h*dk+dk-1 of a row; they
// may be parts of one fused qkv buffer); out: T rows of H*dk floats, ldo apart, must not
// overlap the inputs. Scratch comes from `arena` and is given back before returning.
// Throws std::invalid_argument for T < 0, H < 1, dk < 1 or ld, ldo < H*dk, and for Int8Bf16
// products where int8_bf16_attention_available(kt) is false.
void dot_product_attention(const KernelTable& kt, ThreadTeam& team, Arena& arena, const float* q,
                           const float* k, const float* v, int64_t ld, int64_t T, int64_t H,
                           int64_t dk, float scale, float* out, int64_t ldo,
                           AttentionProducts products = AttentionProducts::F32);

}  // namespace pk::kernels
