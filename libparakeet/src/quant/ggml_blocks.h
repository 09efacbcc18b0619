// ggml's quantised block formats, byte for byte (ggml-common.h's block_q4_0 ... block_q6_K;
// little-endian, "f16" an IEEE half):
//   q4_0  32 values, 18 bytes: f16 d, qs[16]; value j < 16 is the low nibble of qs[j], value
//         j + 16 its high nibble; x = (nibble - 8) * d
//   q4_1  32 values, 20 bytes: f16 d, f16 m, qs[16] as q4_0; x = nibble * d + m
//   q5_0  32 values, 22 bytes: f16 d, u32 qh (bit j: the 5th bit of value j), qs[16] as q4_0;
//         x = (q5 - 16) * d
//   q5_1  32 values, 24 bytes: f16 d, f16 m, u32 qh, qs[16]; x = q5 * d + m
//   q8_0  32 values, 34 bytes: f16 d, int8 qs[32]; x = qs * d
//   q4_K  256 values, 144 bytes: f16 d, f16 dmin, scales[12] (8 sub-blocks of 32, a 6-bit
//         scale and a 6-bit min each, packed as k4_scale_min below), qs[128]: four groups of
//         64 values, group g in qs[32 g ..]: its first 32 the low nibbles (sub-block 2 g), its
//         next 32 the high nibbles (sub-block 2 g + 1); x = (d * sc) * q - (dmin * m)
//   q5_K  256 values, 176 bytes: as q4_K, with qh[32] before qs: the 5th bit of value l of
//         group g's first half is bit 2 g of qh[l], of its second half bit 2 g + 1
//   q6_K  256 values, 210 bytes: ql[128], qh[64], int8 scales[16] (one per 16 values), f16 d
//         last; two halves of 128, half h in ql[64 h ..], qh[32 h ..], scales[8 h ..]; for
//         l < 32: values l, l + 32, l + 64, l + 96 take the low nibble of ql[l], of ql[l + 32],
//         the high nibble of ql[l], of ql[l + 32], and bits 0-1, 2-3, 4-5, 6-7 of qh[l] above
//         it; x = (d * sc) * (q6 - 32)
//
// dequantize_row is ggml's reference dequantiser bit for bit: the same float operations in the
// same order, never fused (this directory is compiled with -ffp-contract=off). quantize_row is
// ggml's reference quantiser (what ggml_quantize_chunk does with no importance matrix) byte
// for byte. tests/python/test_ggml_blocks.py checks both against ggml's own libggml-base.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gguf/gguf_types.h"
#include "kernels/f16.h"

// The functions defined here are `static inline`: this header is included by *_avx2.cpp files
// too, whose copies must never be the ones the linker picks for portable code.

namespace pk::quant {

// Values and bytes of one block of `type` (F32 / F16: one value).
static inline int64_t block_values(GgmlType type) { return ggml_type_layout(type).block_elems; }
static inline size_t block_bytes(GgmlType type) { return ggml_type_layout(type).block_bytes; }
// Bytes of n values (n a multiple of block_values(type)).
static inline size_t row_bytes(GgmlType type, int64_t n) {
    return static_cast<size_t>(n / block_values(type)) * block_bytes(type);
}

// dst[0 .. n) = the values of the row_bytes(type, n) bytes at src. n must be a multiple of the
// block (std::invalid_argument otherwise). Any supported type, F32 and F16 included.
void dequantize_row(GgmlType type, const uint8_t* src, int64_t n, float* dst);

// The row_bytes(type, n) bytes that encode src[0 .. n) (n a multiple of the block). F32 is a
// copy, F16 rounds to nearest even, the others are ggml's reference quantisers.
void quantize_row(GgmlType type, const float* src, int64_t n, uint8_t* dst);

// Values [32 v, 32 v + 32) of a quantised block (not Q8_0; v < block_values / 32) as unsigned
// integers u[32] < 64 with a scale s and an offset o per group of 16: value i is, in exact
// arithmetic, s[i / 16] * u[i] - o[i / 16]. The matrix kernels multiply u by int8 activations
// (vpdpbusd / vpmaddubsw take unsigned weights) and apply s and o per group.
void unsigned_unit(GgmlType type, const uint8_t* block, int v, uint8_t* u, float* s, float* o);

// q4_K / q5_K: the 6-bit scale and min of sub-block j < 8 from the 12 packed bytes.
static inline void k4_scale_min(int j, const uint8_t* scales, uint8_t& sc, uint8_t& m) {
    if (j < 4) {
        sc = scales[j] & 63;
        m = scales[j + 4] & 63;
    } else {
        sc = static_cast<uint8_t>((scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4));
        m = static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
    }
}

// A half at p (unaligned, little-endian).
static inline float half_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, sizeof h);
    return kernels::f16_to_f32(h);
}

// Only the scales and offsets of unsigned_unit, for decoders that extract u themselves (inline:
// the decoders call it per row and unit). The dequantiser's parameters are these too: a = s, and
// the min m = -o (q4_1, q5_1) or dmin * m = o (q4_K, q5_K).
static inline void unsigned_unit_scales(GgmlType type, const uint8_t* block, int v, float* s, float* o) {
    switch (type) {
        case GgmlType::Q4_0:
        case GgmlType::Q5_0:
            s[0] = s[1] = half_at(block);
            o[0] = o[1] = (type == GgmlType::Q4_0 ? 8.0f : 16.0f) * s[0];
            return;
        case GgmlType::Q4_1:
        case GgmlType::Q5_1:
            s[0] = s[1] = half_at(block);
            o[0] = o[1] = -half_at(block + 2);
            return;
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: {
            uint8_t sc, m;
            k4_scale_min(v, block + 4, sc, m);
            s[0] = s[1] = half_at(block) * sc;
            o[0] = o[1] = half_at(block + 2) * m;
            return;
        }
        case GgmlType::Q6_K: {
            const float d = half_at(block + 208);
            const auto* sc = reinterpret_cast<const int8_t*>(block + 192) + 2 * v;
            for (int g = 0; g < 2; ++g) {
                s[g] = d * sc[g];
                o[g] = 32.0f * s[g];
            }
            return;
        }
        default:  // F32, F16, Q8_0 have no unsigned form
            s[0] = s[1] = o[0] = o[1] = 0.0f;
            return;
    }
}

}  // namespace pk::quant
