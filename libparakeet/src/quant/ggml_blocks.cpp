// Dequantisation and the unsigned form of ggml's blocks (layouts in ggml_blocks.h). Both start
// from one unpacking per 32 values into integers and per-group parameters, so the bit layouts
// are written once; the float formula of each type is then exactly ggml's.
#include "quant/ggml_blocks.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/f16.h"

namespace pk::quant {
namespace {

// How a type turns its integers into values, with its unit's s and o (unsigned_unit_scales;
// g = the value's group of 16), in ggml's order of operations:
//   q4_0, q5_0, q6_K   x = float(u - bias) * s[g]   (the offset o = bias * s is not used)
//   the others         x = s[g] * float(u) - o[g]   (q4_K, q5_K: (d sc) q - (dmin m); q4_1,
//                      q5_1: d q + m, as o = -m, and x - (-m) is exactly x + m)
bool is_offset_type(GgmlType type) {
    return type == GgmlType::Q4_0 || type == GgmlType::Q5_0 || type == GgmlType::Q6_K;
}

int bias_of(GgmlType type) { return type == GgmlType::Q4_0 ? 8 : type == GgmlType::Q6_K ? 32 : 16; }

// The low and high nibbles of qs[16] are values j and j + 16.
void nibbles32(const uint8_t* qs, uint8_t* u) {
    for (int j = 0; j < 16; ++j) {
        u[j] = qs[j] & 0xF;
        u[j + 16] = qs[j] >> 4;
    }
}

void high_bits32(const uint8_t* qh_bytes, uint8_t* u) {
    uint32_t qh;
    std::memcpy(&qh, qh_bytes, sizeof qh);
    for (int j = 0; j < 32; ++j) u[j] = static_cast<uint8_t>(u[j] | (((qh >> j) & 1u) << 4));
}

// The integers u of values [32 v, 32 v + 32) of one block (v < 8 for the K-quants, 0
// otherwise). One unpacking serves the dequantiser and the matrix kernels' decoder.
void unit_values(GgmlType type, const uint8_t* block, int v, uint8_t* u) {
    switch (type) {
        case GgmlType::Q4_0: nibbles32(block + 2, u); return;
        case GgmlType::Q4_1: nibbles32(block + 4, u); return;
        case GgmlType::Q5_0:
            nibbles32(block + 6, u);
            high_bits32(block + 2, u);
            return;
        case GgmlType::Q5_1:
            nibbles32(block + 8, u);
            high_bits32(block + 4, u);
            return;
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: {
            // Sub-block v: group v / 2 of 64, its low nibbles (v even) or high nibbles (v odd).
            const bool five = type == GgmlType::Q5_K;
            const uint8_t* qs = block + (five ? 48 : 16) + 32 * (v / 2);
            const int shift = 4 * (v % 2);
            for (int l = 0; l < 32; ++l) u[l] = (qs[l] >> shift) & 0xF;
            if (five) {
                const uint8_t* qh = block + 16;
                for (int l = 0; l < 32; ++l) u[l] = static_cast<uint8_t>(u[l] | (((qh[l] >> v) & 1) << 4));
            }
            return;
        }
        case GgmlType::Q6_K: {
            // Half h = v / 4 of 128; its quarter q = v % 4 takes the low (q < 2) or high nibbles
            // of ql[64 h + 32 (q % 2) ..] and bits 2 q, 2 q + 1 of qh[32 h ..].
            const int h = v / 4, q = v % 4;
            const uint8_t* ql = block + 64 * h + 32 * (q % 2);
            const uint8_t* qh = block + 128 + 32 * h;
            const int shift = 4 * (q / 2);
            for (int l = 0; l < 32; ++l) {
                u[l] = static_cast<uint8_t>(((ql[l] >> shift) & 0xF) | (((qh[l] >> (2 * q)) & 3) << 4));
            }
            return;
        }
        default:
            throw std::invalid_argument(std::string("no block unpacking for type ") +
                                        ggml_type_name(static_cast<uint32_t>(type)));
    }
}

void check_whole_blocks(GgmlType type, int64_t n) {
    if (n < 0 || n % block_values(type) != 0) {
        throw std::invalid_argument(std::string(ggml_type_name(static_cast<uint32_t>(type))) + ": " +
                                    std::to_string(n) + " values are not a whole number of blocks");
    }
}

}  // namespace

void dequantize_row(GgmlType type, const uint8_t* src, int64_t n, float* dst) {
    check_whole_blocks(type, n);
    switch (type) {
        case GgmlType::F32:
            std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
            return;
        case GgmlType::F16:
            for (int64_t i = 0; i < n; ++i) dst[i] = half_at(src + 2 * i);
            return;
        case GgmlType::Q8_0:
            for (int64_t b = 0; b < n / 32; ++b, src += 34, dst += 32) {
                const float d = half_at(src);
                for (int j = 0; j < 32; ++j) dst[j] = static_cast<int8_t>(src[2 + j]) * d;
            }
            return;
        default:
            break;
    }
    const size_t bytes = block_bytes(type);
    const int units = static_cast<int>(block_values(type) / 32);
    const bool offset = is_offset_type(type);
    const int bias = bias_of(type);
    uint8_t u[32];
    float s[2], o[2];
    for (int64_t blk = 0; blk < n / block_values(type); ++blk, src += bytes) {
        for (int v = 0; v < units; ++v, dst += 32) {
            unit_values(type, src, v, u);
            unsigned_unit_scales(type, src, v, s, o);
            for (int i = 0; i < 32; ++i) {
                const int g = i / 16;
                dst[i] = offset ? static_cast<float>(u[i] - bias) * s[g] : s[g] * static_cast<float>(u[i]) - o[g];
            }
        }
    }
}

void unsigned_unit(GgmlType type, const uint8_t* block, int v, uint8_t* u, float* s, float* o) {
    unit_values(type, block, v, u);
    unsigned_unit_scales(type, block, v, s, o);
}

}  // namespace pk::quant
