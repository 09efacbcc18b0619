// The unsigned-form block types (Q4_0 ... Q6_K) in the matmul: decoding a panel's ggml blocks
// into units (matmul_layout.h), quantising the activations, and the portable tile. The SIMD
// tiles (matmul_kquant_avx2.cpp, matmul_kquant_avx512.cpp, matmul_kquant_dotprod.cpp; the
// i8mm level's reorders the units first) read the same units and activations and give the same
// bits.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/kernel_table.h"
#include "quant/ggml_blocks.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

struct UnitView {
    float* s;  // [2][16]
    float* o;  // [2][16]
    uint8_t* u;  // [8 quads][64]
};

UnitView unit_at(uint8_t* units, int64_t i) {
    uint8_t* p = units + static_cast<size_t>(i) * kKqUnitBytes;
    auto* f = reinterpret_cast<float*>(p);
    return UnitView{f, f + 2 * kPanel, p + 4 * kPanel * sizeof(float)};
}

// Same rounding as the Q8_0 activations (nearest even of x / scale, clamped to +-127).
void quantize_kq(const float* x, int64_t rows, int64_t ldx, int64_t nblocks, int64_t mr, int8_t* q,
                 float* scale, float* corr) {
    for (int64_t b = 0; b < nblocks; ++b) {
        for (int64_t r = 0; r < mr; ++r) {
            int8_t* qb = q + (b * mr + r) * kQ8Block;
            float* cb = corr + (b * mr + r) * kKqCorrPerBlock;
            if (r >= rows) {
                std::memset(qb, 0, kQ8Block);
                scale[b * mr + r] = 0.0f;
                cb[0] = cb[1] = cb[2] = 0.0f;
                continue;
            }
            const float* xb = x + r * ldx + b * kQ8Block;
            float amax = 0.0f;
            for (int64_t i = 0; i < kQ8Block; ++i) amax = std::max(amax, std::fabs(xb[i]));
            const Q8Scale s = q8_scale(amax);
            int32_t sum[2] = {0, 0};
            for (int64_t i = 0; i < kQ8Block; ++i) {
                const float v = std::fmin(std::fmax(xb[i] * s.id, -127.0f), 127.0f);
                qb[i] = static_cast<int8_t>(std::nearbyint(v));
                sum[i / 16] += qb[i];
            }
            scale[b * mr + r] = s.d;
            cb[0] = s.d * static_cast<float>(sum[0]);
            cb[1] = s.d * static_cast<float>(sum[1]);
            cb[2] = s.d * static_cast<float>(sum[0] + sum[1]);
        }
    }
}

void tile_kq(int64_t rows, int64_t nunits, bool halves, const int8_t* a, const float* a_scale, const float* a_corr,
             const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    float acc[kRowsKq][kPanel] = {};
    for (int64_t b = 0; b < nunits; ++b) {
        const UnitView w = unit_at(const_cast<uint8_t*>(units), b);
        for (int64_t r = 0; r < rows; ++r) {
            const int8_t* qx = a + (b * kRowsKq + r) * kQ8Block;
            const float dx = a_scale[b * kRowsKq + r];
            const float* corr = a_corr + (b * kRowsKq + r) * kKqCorrPerBlock;
            for (int64_t j = 0; j < kPanel; ++j) {
                int32_t isum[2] = {0, 0};
                for (int64_t t = 0; t < kQ8QuadsPerBlock; ++t) {
                    for (int64_t i = 0; i < 4; ++i) isum[t / 4] += w.u[t * 4 * kPanel + 4 * j + i] * qx[4 * t + i];
                }
                float v = acc[r][j];
                if (halves) {
                    for (int64_t h = 0; h < 2; ++h) {
                        v = std::fma(w.s[h * kPanel + j] * static_cast<float>(isum[h]), dx, v);
                        v = std::fma(-w.o[h * kPanel + j], corr[h], v);
                    }
                } else {
                    v = std::fma(w.s[j] * static_cast<float>(isum[0] + isum[1]), dx, v);
                    v = std::fma(-w.o[j], corr[2], v);
                }
                acc[r][j] = v;
            }
        }
    }
    for (int64_t r = 0; r < rows; ++r) {
        float* cr = c + r * ldc;
        for (int64_t j = 0; j < kPanel; ++j) cr[j] = accumulate ? cr[j] + acc[r][j] : (bias ? acc[r][j] + bias[j] : acc[r][j]);
    }
}

}  // namespace

namespace matmul_detail {

void decode_kq_units_quads(WeightType type, const uint8_t* panel, int64_t u0, int64_t n, uint8_t* units) {
    const auto gtype = static_cast<GgmlType>(type);
    const int64_t units_per_block = quant::block_values(gtype) / kQ8Block;
    const size_t block_bytes = quant::block_bytes(gtype);
    alignas(4) uint8_t u[kQ8Block];
    float s[2], o[2];
    for (int64_t i = 0; i < n; ++i) {
        const int64_t unit = u0 + i, column = unit / units_per_block;
        const int v = static_cast<int>(unit % units_per_block);
        const UnitView out = unit_at(units, i);
        for (int64_t j = 0; j < kPanel; ++j) {
            quant::unsigned_unit(gtype, panel + (column * kPanel + j) * block_bytes, v, u, s, o);
            for (int64_t h = 0; h < 2; ++h) {
                out.s[h * kPanel + j] = s[h];
                out.o[h * kPanel + j] = o[h];
            }
            for (int64_t t = 0; t < kQ8QuadsPerBlock; ++t) std::memcpy(out.u + t * 4 * kPanel + 4 * j, u + 4 * t, 4);
        }
    }
}

}  // namespace matmul_detail

void add_matmul_kquant_scalar(KernelTable& t) {
    t.matmul.decode_kq_units = decode_kq_units_quads;
    t.matmul.quantize_kq = quantize_kq;
    t.matmul.tile_kq = tile_kq;
    t.matmul.kq_rows = kRowsKq;
}

}  // namespace pk::kernels
