// Dequantisation and the unsigned form of ggml's blocks (layouts in ggml_blocks.h). Both start
// from one unpacking per type into integers and per-group parameters, so the bit layouts are
// written once; the float formula of each type is then exactly ggml's.
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
//   Offset     x = float(u - bias) * a[g]     q4_0, q5_0, q6_K
//   AddMin     x = float(u) * a[g] + b[g]     q4_1, q5_1 (b = m)
//   SubtractMin x = a[g] * float(u) - b[g]    q4_K, q5_K (a = d * sc, b = dmin * m)
enum class Formula { Offset, AddMin, SubtractMin };

struct Unpacked {
    int n;  // values in the block: 32 or 256
    Formula formula;
    int bias;  // Offset only
    uint8_t u[256];
    float a[16];
    float b[16];
};

void set_groups(Unpacked& p, float a, float b) {
    for (int g = 0; g < p.n / 16; ++g) {
        p.a[g] = a;
        p.b[g] = b;
    }
}

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

// q4_K / q5_K: the nibbles of the four groups of 64, then the scales and mins per sub-block.
void k4_values(const uint8_t* block, const uint8_t* qs, Unpacked& p) {
    const float d = half_at(block);
    const float dmin = half_at(block + 2);
    const uint8_t* scales = block + 4;
    for (int g = 0; g < 4; ++g) {
        for (int l = 0; l < 32; ++l) {
            p.u[64 * g + l] = qs[32 * g + l] & 0xF;
            p.u[64 * g + 32 + l] = qs[32 * g + l] >> 4;
        }
    }
    for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        k4_scale_min(j, scales, sc, m);
        const float dj = d * sc;
        const float mj = dmin * m;
        p.a[2 * j] = p.a[2 * j + 1] = dj;
        p.b[2 * j] = p.b[2 * j + 1] = mj;
    }
}

void unpack(GgmlType type, const uint8_t* block, Unpacked& p) {
    switch (type) {
        case GgmlType::Q4_0:
            p = {32, Formula::Offset, 8, {}, {}, {}};
            nibbles32(block + 2, p.u);
            set_groups(p, half_at(block), 0.0f);
            return;
        case GgmlType::Q4_1:
            p = {32, Formula::AddMin, 0, {}, {}, {}};
            nibbles32(block + 4, p.u);
            set_groups(p, half_at(block), half_at(block + 2));
            return;
        case GgmlType::Q5_0:
            p = {32, Formula::Offset, 16, {}, {}, {}};
            nibbles32(block + 6, p.u);
            high_bits32(block + 2, p.u);
            set_groups(p, half_at(block), 0.0f);
            return;
        case GgmlType::Q5_1:
            p = {32, Formula::AddMin, 0, {}, {}, {}};
            nibbles32(block + 8, p.u);
            high_bits32(block + 4, p.u);
            set_groups(p, half_at(block), half_at(block + 2));
            return;
        case GgmlType::Q4_K:
            p = {256, Formula::SubtractMin, 0, {}, {}, {}};
            k4_values(block, block + 16, p);
            return;
        case GgmlType::Q5_K: {
            p = {256, Formula::SubtractMin, 0, {}, {}, {}};
            k4_values(block, block + 48, p);
            const uint8_t* qh = block + 16;
            for (int g = 0; g < 4; ++g) {
                for (int l = 0; l < 32; ++l) {
                    p.u[64 * g + l] = static_cast<uint8_t>(p.u[64 * g + l] | (((qh[l] >> (2 * g)) & 1) << 4));
                    p.u[64 * g + 32 + l] =
                        static_cast<uint8_t>(p.u[64 * g + 32 + l] | (((qh[l] >> (2 * g + 1)) & 1) << 4));
                }
            }
            return;
        }
        case GgmlType::Q6_K: {
            p = {256, Formula::Offset, 32, {}, {}, {}};
            const float d = half_at(block + 208);
            const auto* sc = reinterpret_cast<const int8_t*>(block + 192);
            for (int h = 0; h < 2; ++h) {
                const uint8_t* ql = block + 64 * h;
                const uint8_t* qh = block + 128 + 32 * h;
                uint8_t* u = p.u + 128 * h;
                for (int l = 0; l < 32; ++l) {
                    u[l] = static_cast<uint8_t>((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4));
                    u[l + 32] = static_cast<uint8_t>((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4));
                    u[l + 64] = static_cast<uint8_t>((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
                    u[l + 96] = static_cast<uint8_t>((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
                }
            }
            for (int g = 0; g < 16; ++g) {
                p.a[g] = d * sc[g];
                p.b[g] = 0.0f;
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
    Unpacked p;
    for (int64_t b = 0; b < n / block_values(type); ++b, src += bytes) {
        unpack(type, src, p);
        for (int i = 0; i < p.n; ++i) {
            const int g = i / 16;
            switch (p.formula) {
                case Formula::Offset: dst[i] = static_cast<float>(p.u[i] - p.bias) * p.a[g]; break;
                case Formula::AddMin: dst[i] = static_cast<float>(p.u[i]) * p.a[g] + p.b[g]; break;
                case Formula::SubtractMin: dst[i] = p.a[g] * static_cast<float>(p.u[i]) - p.b[g]; break;
            }
        }
        dst += p.n;
    }
}

void unsigned_form(GgmlType type, const uint8_t* block, UnsignedBlock& out) {
    Unpacked p;
    unpack(type, block, p);
    std::memcpy(out.u, p.u, static_cast<size_t>(p.n));
    for (int g = 0; g < p.n / 16; ++g) {
        out.s[g] = p.a[g];
        switch (p.formula) {
            case Formula::Offset: out.o[g] = static_cast<float>(p.bias) * p.a[g]; break;
            case Formula::AddMin: out.o[g] = -p.b[g]; break;
            case Formula::SubtractMin: out.o[g] = p.b[g]; break;
        }
    }
}

}  // namespace pk::quant
