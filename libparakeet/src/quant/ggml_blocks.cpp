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

float half_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, sizeof h);
    return kernels::f16_to_f32(h);
}

// How a type turns its integers into values (g = the value's group of 16):
//   Offset      x = float(u - bias) * a[g]     q4_0, q5_0, q6_K
//   AddMin      x = float(u) * a[g] + b[g]     q4_1, q5_1 (b = m)
//   SubtractMin x = a[g] * float(u) - b[g]     q4_K, q5_K (a = d * sc, b = dmin * m)
enum class Formula { Offset, AddMin, SubtractMin };

Formula formula_of(GgmlType type) {
    switch (type) {
        case GgmlType::Q4_1:
        case GgmlType::Q5_1: return Formula::AddMin;
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: return Formula::SubtractMin;
        default: return Formula::Offset;
    }
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

// The parameters a, b (the Formula's) of the two groups of 16 of values [32 v, 32 v + 32).
void unit_params(GgmlType type, const uint8_t* block, int v, float* a, float* b) {
    switch (type) {
        case GgmlType::Q4_0:
        case GgmlType::Q5_0:
            a[0] = a[1] = half_at(block);
            b[0] = b[1] = 0.0f;
            return;
        case GgmlType::Q4_1:
        case GgmlType::Q5_1:
            a[0] = a[1] = half_at(block);
            b[0] = b[1] = half_at(block + 2);
            return;
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: {
            uint8_t sc, m;
            k4_scale_min(v, block + 4, sc, m);
            a[0] = a[1] = half_at(block) * sc;
            b[0] = b[1] = half_at(block + 2) * m;
            return;
        }
        case GgmlType::Q6_K: {
            const float d = half_at(block + 208);
            const auto* sc = reinterpret_cast<const int8_t*>(block + 192) + 2 * v;
            a[0] = d * sc[0];
            a[1] = d * sc[1];
            b[0] = b[1] = 0.0f;
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
    const Formula formula = formula_of(type);
    const int bias = bias_of(type);
    uint8_t u[32];
    float a[2], b[2];
    for (int64_t blk = 0; blk < n / block_values(type); ++blk, src += bytes) {
        for (int v = 0; v < units; ++v, dst += 32) {
            unit_values(type, src, v, u);
            unit_params(type, src, v, a, b);
            for (int i = 0; i < 32; ++i) {
                const int g = i / 16;
                switch (formula) {
                    case Formula::Offset: dst[i] = static_cast<float>(u[i] - bias) * a[g]; break;
                    case Formula::AddMin: dst[i] = static_cast<float>(u[i]) * a[g] + b[g]; break;
                    case Formula::SubtractMin: dst[i] = a[g] * static_cast<float>(u[i]) - b[g]; break;
                }
            }
        }
    }
}

void unsigned_unit_scales(GgmlType type, const uint8_t* block, int v, float* s, float* o) {
    float b[2];
    unit_params(type, block, v, s, b);
    const Formula formula = formula_of(type);
    const float bias = static_cast<float>(bias_of(type));
    for (int g = 0; g < 2; ++g) {
        switch (formula) {
            case Formula::Offset: o[g] = bias * s[g]; break;
            case Formula::AddMin: o[g] = -b[g]; break;
            case Formula::SubtractMin: o[g] = b[g]; break;
        }
    }
}

void unsigned_unit(GgmlType type, const uint8_t* block, int v, uint8_t* u, float* s, float* o) {
    unit_values(type, block, v, u);
    unsigned_unit_scales(type, block, v, s, o);
}

}  // namespace pk::quant
