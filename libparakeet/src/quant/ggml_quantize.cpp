// ggml's reference quantisers (quantize_row_*_ref in ggml-quants.c: what ggml_quantize_chunk
// runs when there is no importance matrix), rewritten here. Files are only byte-identical to
// ggml's when every float operation happens in ggml's order and precision, so the expressions
// below keep ggml's association and int-to-float conversions exactly, and nothing is fused
// (-ffp-contract=off for this directory). The algorithm of each type:
//   q4_0 / q5_0  the value of largest magnitude, with its sign, gives d = max / -8 (-16); each
//                value is min(15 (31), (int8)(x / d + 8.5 (16.5))), x / d as x * (1 / d)
//   q4_1 / q5_1  d = (max - min) / 15 (31), m = min; q = (x - min) * (1 / d) + 0.5 truncated
//   q4_K / q5_K  per sub-block of 32 a weighted search for a scale and a min (make_qkx2), the
//                8 scales and mins quantised to 6 bits against the super-block's d and dmin,
//                then every value re-quantised against its rounded scale and min
//   q6_K         per group of 16 a signed scale search (make_qx, weights x^2), the 16 scales
//                quantised to int8 against d, then every value re-quantised
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/f16.h"
#include "kernels/quantize_q8_0.h"
#include "quant/ggml_blocks.h"

namespace pk::quant {
namespace {

constexpr float kGroupMaxEps = 1e-15f;

void put_half(uint8_t* p, float v) {
    const uint16_t h = kernels::f32_to_f16(v);
    std::memcpy(p, &h, sizeof h);
}

// Round to nearest (ties to even) through the float trick ggml uses: adding 1.5 * 2^23 leaves
// the integer in the low mantissa bits. Valid for |v| <= 2^22 - 1.
int nearest_int(float v) {
    const float shifted = v + 12582912.f;
    int32_t i;
    std::memcpy(&i, &shifted, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

int clamp(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// ---- q4_0, q5_0, q4_1, q5_1: 32 levels of 4 or 5 bits per block.

// Packs 32 values as ggml's nibbles: value j in the low nibble of qs[j], value j + 16 in the high.
void put_nibbles(const uint8_t* q, uint8_t* qs) {
    for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((q[j] & 0x0F) | ((q[j + 16] & 0x0F) << 4));
}

// Packs 32 five-bit values: their nibbles at qs and their 5th bits as a u32 at qh.
void put_q5(const uint8_t* q, uint8_t* qh_bytes, uint8_t* qs) {
    put_nibbles(q, qs);
    uint32_t qh = 0;
    for (int j = 0; j < 32; ++j) qh |= ((q[j] & 0x10u) >> 4) << j;
    std::memcpy(qh_bytes, &qh, sizeof qh);
}

// q4_0 / q5_0 (levels 16 / 32): the value of largest magnitude, with its sign, gives
// d = max / -(levels / 2); q = min(levels - 1, (int8)(x * (1 / d) + levels / 2 + 0.5)). Returns d.
float symmetric_levels(const float* x, int levels, uint8_t* q) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    const float d = max / static_cast<float>(-levels / 2);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const float offset = static_cast<float>(levels / 2) + 0.5f;
    for (int j = 0; j < 32; ++j) {
        q[j] = static_cast<uint8_t>(std::min(levels - 1, static_cast<int>(static_cast<int8_t>(x[j] * id + offset))));
    }
    return d;
}

// q4_1 / q5_1 (levels 16 / 32): d = (max - min) / (levels - 1), q = (x - min) * (1 / d) + 0.5
// truncated; ggml clamps q4_1's to 15 and not q5_1's (clamp_top). Sets d and min.
void affine_levels(const float* x, int levels, bool clamp_top, uint8_t* q, float& d, float& min) {
    min = FLT_MAX;
    float max = -FLT_MAX;
    for (int j = 0; j < 32; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    d = (max - min) / static_cast<float>(levels - 1);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; ++j) {
        const int l = static_cast<int8_t>((x[j] - min) * id + 0.5f);
        q[j] = static_cast<uint8_t>(clamp_top ? std::min(levels - 1, l) : l);
    }
}

void quantize_q4_0(const float* x, uint8_t* y) {
    uint8_t q[32];
    put_half(y, symmetric_levels(x, 16, q));
    put_nibbles(q, y + 2);
}

void quantize_q5_0(const float* x, uint8_t* y) {
    uint8_t q[32];
    put_half(y, symmetric_levels(x, 32, q));
    put_q5(q, y + 2, y + 6);
}

void quantize_q4_1(const float* x, uint8_t* y) {
    uint8_t q[32];
    float d, min;
    affine_levels(x, 16, true, q, d, min);
    put_half(y, d);
    put_half(y + 2, min);
    put_nibbles(q, y + 4);
}

void quantize_q5_1(const float* x, uint8_t* y) {
    uint8_t q[32];
    float d, min;
    affine_levels(x, 32, false, q, d, min);
    put_half(y, d);
    put_half(y + 2, min);
    put_q5(q, y + 4, y + 8);
}

// ---- K-quants.

// ggml's make_qkx2_quants: for n values with weights w, finds scale and min (x ~ scale * L -
// min, L in 0..nmax) by trying nstep + 1 inverse scales around nmax / range and keeping the one
// of least weighted squared error. Writes L, returns the scale and sets the_min.
float make_qkx2_quants(int n, int nmax, const float* x, const float* w, uint8_t* L, float* the_min,
                       float rmin, float rdelta, int nstep) {
    float min = x[0], max = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        L[i] = static_cast<uint8_t>(clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
        float diff = scale * L[i] + min - x[i];
        diff = diff * diff;
        best_error += w[i] * diff;
    }
    uint8_t Laux[32];
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = static_cast<uint8_t>(l);
            sum_l += w[i] * l;
            sum_l2 += w[i] * l * l;
            sum_xl += w[i] * l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * Laux[i] + this_min - x[i];
                diff = diff * diff;
                cur_error += w[i] * diff;
            }
            if (cur_error < best_error) {
                std::memcpy(L, Laux, static_cast<size_t>(n));
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// q4_K (bits 4) and q5_K (bits 5): the 256 levels L and the 12 packed scale bytes, d, dmin.
void quantize_k4_levels(const float* x, int nmax, float rmin, float rdelta, int nstep, uint8_t* L,
                        uint8_t* head /* d, dmin, scales[12] */) {
    float mins[8], scales[8], weights[32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
        scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], rmin, rdelta, nstep);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    uint8_t* packed = head + 4;
    std::memset(packed, 0, 12);
    for (int j = 0; j < 8; ++j) {
        uint8_t ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
        uint8_t lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
        ls = std::min<uint8_t>(63, ls);
        lm = std::min<uint8_t>(63, lm);
        if (j < 4) {
            packed[j] = ls;
            packed[j + 4] = lm;
        } else {
            packed[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
            packed[j - 4] = static_cast<uint8_t>(packed[j - 4] | ((ls >> 4) << 6));
            packed[j] = static_cast<uint8_t>(packed[j] | ((lm >> 4) << 6));
        }
    }
    put_half(head, max_scale / 63.f);
    put_half(head + 2, max_min / 63.f);
    const float d = kernels::f16_to_f32(kernels::f32_to_f16(max_scale / 63.f));
    const float dmin = kernels::f16_to_f32(kernels::f32_to_f16(max_min / 63.f));
    for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        k4_scale_min(j, packed, sc, m);
        const float dj = d * sc;
        if (dj == 0.0f) continue;  // ggml keeps the search's levels here
        const float dm = dmin * m;
        for (int ii = 0; ii < 32; ++ii) {
            L[32 * j + ii] = static_cast<uint8_t>(clamp(nearest_int((x[32 * j + ii] + dm) / dj), 0, nmax));
        }
    }
}

void quantize_q4_K(const float* x, uint8_t* y) {
    uint8_t L[256];
    quantize_k4_levels(x, 15, -1.f, 0.1f, 20, L, y);
    uint8_t* q = y + 16;
    for (int j = 0; j < 256; j += 64, q += 32) {
        for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
}

void quantize_q5_K(const float* x, uint8_t* y) {
    uint8_t L[256];
    quantize_k4_levels(x, 31, -0.5f, 0.1f, 15, L, y);
    uint8_t* qh = y + 16;
    uint8_t* ql = y + 48;
    std::memset(qh, 0, 32);
    uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < 256; n += 64, ql += 32) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[n + j];
            if (l1 > 15) {
                l1 -= 16;
                qh[j] |= m1;
            }
            int l2 = L[n + j + 32];
            if (l2 > 15) {
                l2 -= 16;
                qh[j] |= m2;
            }
            ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
        }
        m1 = static_cast<uint8_t>(m1 << 2);
        m2 = static_cast<uint8_t>(m2 << 2);
    }
}

// ggml's make_qx_quants with rmse_type 1 and no importance weights (weights x^2): a signed
// scale for n values, L in 0 .. 2 nmax - 1 (offset by nmax), searched over 18 inverse scales
// around -nmax / max. Returns the scale.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = -nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = static_cast<int8_t>(l + nmax);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
            const float w = x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                L[i] = static_cast<int8_t>(nmax + clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

void quantize_q6_K(const float* x, uint8_t* y) {
    int8_t L[256];
    float scales[16];
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
        const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
        scales[ib] = scale;
        const float abs_scale = std::fabs(scale);
        if (abs_scale > max_abs_scale) {
            max_abs_scale = abs_scale;
            max_scale = scale;
        }
    }
    if (max_abs_scale < kGroupMaxEps) {
        std::memset(y, 0, 210);
        return;
    }
    auto* sc = reinterpret_cast<int8_t*>(y + 192);
    const float iscale = -128.f / max_scale;
    put_half(y + 208, 1 / iscale);
    for (int ib = 0; ib < 16; ++ib) sc[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    const float d_all = kernels::f16_to_f32(kernels::f32_to_f16(1 / iscale));
    for (int j = 0; j < 16; ++j) {
        const float d = d_all * sc[j];
        if (d == 0.0f) continue;
        for (int ii = 0; ii < 16; ++ii) {
            L[16 * j + ii] = static_cast<int8_t>(clamp(nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
        }
    }
    for (int h = 0; h < 2; ++h) {
        uint8_t* ql = y + 64 * h;
        uint8_t* qh = y + 128 + 32 * h;
        const int8_t* l8 = L + 128 * h;
        for (int l = 0; l < 32; ++l) {
            const uint8_t q1 = l8[l] & 0xF, q2 = l8[l + 32] & 0xF, q3 = l8[l + 64] & 0xF, q4 = l8[l + 96] & 0xF;
            ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
            ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
            qh[l] = static_cast<uint8_t>((l8[l] >> 4) | ((l8[l + 32] >> 4) << 2) | ((l8[l + 64] >> 4) << 4) |
                                         ((l8[l + 96] >> 4) << 6));
        }
    }
}

using BlockQuantizer = void (*)(const float* x, uint8_t* y);

BlockQuantizer block_quantizer(GgmlType type) {
    switch (type) {
        case GgmlType::Q4_0: return quantize_q4_0;
        case GgmlType::Q4_1: return quantize_q4_1;
        case GgmlType::Q5_0: return quantize_q5_0;
        case GgmlType::Q5_1: return quantize_q5_1;
        case GgmlType::Q4_K: return quantize_q4_K;
        case GgmlType::Q5_K: return quantize_q5_K;
        case GgmlType::Q6_K: return quantize_q6_K;
        default: return nullptr;
    }
}

}  // namespace

void quantize_row(GgmlType type, const float* src, int64_t n, uint8_t* dst) {
    const int64_t per_block = block_values(type);
    if (n < 0 || n % per_block != 0) {
        throw std::invalid_argument(std::string(ggml_type_name(static_cast<uint32_t>(type))) + ": " +
                                    std::to_string(n) + " values are not a whole number of blocks");
    }
    switch (type) {
        case GgmlType::F32:
            std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
            return;
        case GgmlType::F16:
            for (int64_t i = 0; i < n; ++i) {
                const uint16_t h = kernels::f32_to_f16(src[i]);
                std::memcpy(dst + 2 * i, &h, sizeof h);
            }
            return;
        case GgmlType::Q8_0:
            kernels::quantize_q8_0(src, n, dst);
            return;
        default:
            break;
    }
    const BlockQuantizer quantize = block_quantizer(type);
    const size_t bytes = block_bytes(type);
    for (int64_t b = 0; b < n / per_block; ++b) quantize(src + b * per_block, dst + b * bytes);
}

}  // namespace pk::quant
