// The kernels of dot_product_attention's bf16 products (attention_dot_product.h,
// AttentionProducts::Bf16): a head's keys and values rounded to bfloat16 once, packed in pairs
// for vdpbf16ps (two products per 32-bit lane, 32 per instruction, twice an f32 FMA's on
// AVX512_BF16 cores), and the queries and softmax weights rounded to bfloat16 the same way;
// every sum is accumulated in f32. One pair of slots in AttentionKernels (kernel_table.h),
// filled at the avx512 level only; dot_product_attention runs them only where the CPU has
// AVX512_BF16.
#pragma once

#include <cstdint>

#include "kernels/round_up.h"

namespace pk::kernels::dot_product_bf16 {

// Score columns (keys) come in tiles of kKeyTile; value channels in vectors of kChannelTile.
constexpr int64_t kKeyTile = 64;
constexpr int64_t kChannelTile = 16;
// Query rows per register tile of attend_rows.
constexpr int64_t kRowTile = 4;

// The packed head of T keys and values of dk channels (two bfloat16 in one uint32, the lower
// half the even one; zero past T and past dk):
//   keys[c2 * key_stride(T) + j]      = (k_j[2 c2], k_j[2 c2 + 1]),  c2 < pairs(dk), j < key_stride(T)
//   values[j2 * value_stride(dk) + c] = (v_{2 j2}[c], v_{2 j2 + 1}[c]), j2 < pairs(T), c < value_stride(dk)
inline int64_t pairs(int64_t n) { return (n + 1) / 2; }
inline int64_t key_stride(int64_t T) { return round_up(T, kKeyTile); }
inline int64_t value_stride(int64_t dk) { return round_up(dk, kChannelTile); }
inline int64_t keys_words(int64_t T, int64_t dk) { return pairs(dk) * key_stride(T); }
inline int64_t values_words(int64_t T, int64_t dk) { return pairs(T) * value_stride(dk); }

// Packs one head: k and v are T rows, ld floats apart, of dk channels each (rounded to nearest
// bfloat16, ties to even, as f32_to_bf16 in bf16.h).
using PackHeadFn = void (*)(const float* k, const float* v, int64_t ld, int64_t T, int64_t dk, uint32_t* keys,
                            uint32_t* values);

// Scratch floats attend_rows needs (the tile's queries, scores and weights).
inline int64_t attend_scratch_floats(int64_t T, int64_t dk) {
    return kRowTile * (pairs(dk) + key_stride(T) + key_stride(T) / 2);
}

// For query rows r < nr (q: rows ldq floats apart, dk channels; out: rows ldo apart):
//   s_j = scale * (bf16 q_r · k_j)        (f32 sums of pair products, over the channels in order)
//   w_j = bf16(exp(s_j - max s))          (ops_vec_avx512.h's exp)
//   out_r[c] = (sum_j w_j v_j[c]) / sum_j w_j   (f32 sums over the keys in order)
// A row's result depends only on that row and the head, not on nr or its place in the call.
using AttendRowsFn = void (*)(const uint32_t* keys, const uint32_t* values, int64_t T, int64_t dk, const float* q,
                              int64_t ldq, int64_t nr, float scale, float* scratch, float* out, int64_t ldo);

}  // namespace pk::kernels::dot_product_bf16
