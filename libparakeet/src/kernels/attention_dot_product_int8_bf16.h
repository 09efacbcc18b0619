// The kernels of dot_product_attention's reduced-precision products (attention_dot_product.h,
// AttentionProducts::Int8Bf16), for models whose weights are already quantised:
//   scores        on int8 (vpdpbusd: 64 products per instruction, four times an f32 FMA's):
//                 each query and each key quantised with its own scale (largest |value| / 127),
//                 the keys after subtracting their mean over the tokens, which moves every score
//                 of a query by the same amount (the softmax does not see it) and leaves the
//                 int8 steps to what tells keys apart;
//   weighted sums on bfloat16 (vdpbf16ps: 32 per instruction): values and softmax weights
//                 rounded to nearest bfloat16, summed in f32. Weights in int8 would lose every
//                 key below 1/510 of the largest, bfloat16 keeps 8 significant bits of each.
// One pair of slots in AttentionKernels (kernel_table.h), filled at the avx512 level only;
// dot_product_attention runs them only where the CPU has AVX512_BF16.
#pragma once

#include <cstdint>

#include "kernels/round_up.h"

namespace pk::kernels::dot_product_int8_bf16 {

// Score columns (keys) come in tiles of kKeyTile; value channels in vectors of kChannelTile.
constexpr int64_t kKeyTile = 64;
constexpr int64_t kChannelTile = 16;
// Query rows per register tile of attend_rows.
constexpr int64_t kRowTile = 4;

inline int64_t pairs(int64_t n) { return (n + 1) / 2; }
inline int64_t quads(int64_t n) { return (n + 3) / 4; }
inline int64_t key_stride(int64_t T) { return round_up(T, kKeyTile); }
inline int64_t value_stride(int64_t dk) { return round_up(dk, kChannelTile); }

// A packed head of T keys and values of dk channels, in 32-bit words:
//   keys:   quad c4 of key j at [c4 * key_stride(T) + j]: its channels 4 c4 .. 4 c4 + 3 as
//           unsigned bytes (int8 + 128, the lowest byte the first channel), c4 < quads(dk);
//           then key j's scale at [quads(dk) * key_stride(T) + j] (a float), then dk floats of
//           scratch (the keys' mean). Zero past T and past dk (int8 0, byte 128).
//   values: [j2 * value_stride(dk) + c] = (v_{2 j2}[c], v_{2 j2 + 1}[c]) as two bfloat16, the
//           lower half the even key; zero past T and past dk.
inline int64_t keys_words(int64_t T, int64_t dk) { return (quads(dk) + 1) * key_stride(T) + value_stride(dk); }
inline int64_t values_words(int64_t T, int64_t dk) { return pairs(T) * value_stride(dk); }

// Packs one head: k and v are T rows, ld floats apart, of dk channels each.
using PackHeadFn = void (*)(const float* k, const float* v, int64_t ld, int64_t T, int64_t dk, uint32_t* keys,
                            uint32_t* values);

// Scratch floats attend_rows needs (the tile's queries, scores and weights).
inline int64_t attend_scratch_floats(int64_t T, int64_t dk) {
    return kRowTile * (quads(dk) + key_stride(T) + key_stride(T) / 2);
}

// For query rows r < nr (q: rows ldq floats apart, dk channels; out: rows ldo apart), with
// q8 / k8 the int8 query and (mean-subtracted) key and sq / sk their scales:
//   s_j = scale * sq * sk_j * (q8 · k8_j)           (exact integer sums)
//   w_j = bf16(exp(s_j - max s))                    (ops_vec_avx512.h's exp)
//   out_r[c] = (sum_j w_j v_j[c]) / sum_j w_j       (f32 sums over the keys in order)
// A row's result depends only on that row and the head, not on nr or its place in the call.
using AttendRowsFn = void (*)(const uint32_t* keys, const uint32_t* values, int64_t T, int64_t dk, const float* q,
                              int64_t ldq, int64_t nr, float scale, float* scratch, float* out, int64_t ldo);

}  // namespace pk::kernels::dot_product_int8_bf16
