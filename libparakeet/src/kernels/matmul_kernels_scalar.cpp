// Portable micro-kernels of the matmul (any CPU: the scalar level of kernel_table.h). Same
// layouts, tiles and quantisation as the AVX2 ones; plain loops the compiler may vectorise.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/f16.h"
#include "kernels/kernel_table.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

constexpr int64_t MR = kRowsF32;
constexpr int64_t QR = kRowsQ8;

// Writes a rows x 16 tile of accumulators (row stride 16) to c: see MatmulKernels.
void store_tile(const float* acc, int64_t rows, float* c, int64_t ldc, const float* bias,
                bool accumulate) {
    for (int64_t r = 0; r < rows; ++r) {
        float* cr = c + r * ldc;
        const float* ar = acc + r * kPanel;
        for (int64_t j = 0; j < kPanel; ++j) {
            if (accumulate) {
                cr[j] += ar[j];
            } else {
                cr[j] = bias ? ar[j] + bias[j] : ar[j];
            }
        }
    }
}

// Same result as cvtps2dq(min(max(x * id, -127), 127)) with the default rounding mode; the
// clamp only matters for NaN / inf inputs and keeps the conversion defined.
int16_t quantize_q8(float x, float id) {
    const float v = std::fmin(std::fmax(x * id, -127.0f), 127.0f);
    return static_cast<int16_t>(std::nearbyint(v));
}

void tile_f32(int64_t rows, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
              const float* bias, bool accumulate) {
    // Row by row, so that one row of accumulators fits in SSE registers.
    float acc[MR][kPanel] = {};
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t k = 0; k < kc; ++k) {
            const float ar = a[k * MR + r];
            for (int64_t j = 0; j < kPanel; ++j) acc[r][j] += ar * b[k * kPanel + j];
        }
    }
    store_tile(&acc[0][0], rows, c, ldc, bias, accumulate);
}

// Integer dot products of one block of weights (16 outputs; q laid out as in a panel block,
// int8 or int16) with `rows` activation rows packed with row stride `rows`:
// isum[r][j] = sum over the 32 k of q_w * q_x.
template <class Q>
void block_dot_q8(const Q* q, const int16_t* a, int64_t rows, int32_t (*isum)[kPanel]) {
    for (int64_t r = 0; r < rows; ++r) std::fill(isum[r], isum[r] + kPanel, 0);
    for (int64_t t = 0; t < kQ8PairsPerBlock; ++t) {
        const Q* qt = q + t * 2 * kPanel;
        for (int64_t j = 0; j < kPanel; ++j) {
            const int32_t w0 = qt[16 * (j / 8) + 2 * (j % 8)];
            const int32_t w1 = qt[16 * (j / 8) + 2 * (j % 8) + 1];
            for (int64_t r = 0; r < rows; ++r) {
                const int16_t* xr = a + 2 * (t * rows + r);
                isum[r][j] += w0 * xr[0] + w1 * xr[1];
            }
        }
    }
}

void tile_q8(int64_t rows, int64_t nblocks, const int16_t* a, const float* a_scale,
             const uint8_t* b, float* c, int64_t ldc, const float* bias, bool accumulate) {
    float acc[QR][kPanel] = {};
    int32_t isum[QR][kPanel];
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const float* w_scale = reinterpret_cast<const float*>(b);
        block_dot_q8(reinterpret_cast<const int16_t*>(b + kPanel * sizeof(float)), a, QR, isum);
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t j = 0; j < kPanel; ++j) {
                acc[r][j] += w_scale[j] * a_scale[r] * static_cast<float>(isum[r][j]);
            }
        }
        a += 2 * kQ8PairsPerBlock * QR;
        a_scale += QR;
        b += kQ8WideBlockBytes;
    }
    store_tile(&acc[0][0], rows, c, ldc, bias, accumulate);
}

void widen_q8(const uint8_t* blocks, int64_t nblocks, uint8_t* wide) {
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        std::memcpy(wide, blocks, kPanel * sizeof(float));
        const int8_t* q = reinterpret_cast<const int8_t*>(blocks + kPanel * sizeof(float));
        int16_t* w = reinterpret_cast<int16_t*>(wide + kPanel * sizeof(float));
        for (int64_t i = 0; i < kPanel * kQ8Block; ++i) w[i] = q[i];
        blocks += kQ8PanelBlockBytes;
        wide += kQ8WideBlockBytes;
    }
}

void f16_to_f32_n(const uint16_t* src, int64_t n, float* dst) {
    for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(src[i]);
}

void pack_rows_f32(const float* x, int64_t rows, int64_t ldx, int64_t kc, float* a) {
    for (int64_t r = 0; r < MR; ++r) {
        if (r < rows) {
            for (int64_t k = 0; k < kc; ++k) a[k * MR + r] = x[r * ldx + k];
        } else {
            for (int64_t k = 0; k < kc; ++k) a[k * MR + r] = 0.0f;
        }
    }
}

// One row into a layout whose pairs and scales are `stride` apart.
void quantize_row_strided(const float* x, int64_t K, int16_t* q, float* scale, int64_t stride) {
    for (int64_t b = 0; b < K / kQ8Block; ++b) {
        const float* xb = x + b * kQ8Block;
        float amax = 0.0f;
        for (int64_t i = 0; i < kQ8Block; ++i) amax = std::max(amax, std::fabs(xb[i]));
        const Q8Scale s = q8_scale(amax);
        scale[b * stride] = s.d;
        for (int64_t i = 0; i < kQ8Block; ++i) {
            const int64_t t = b * kQ8PairsPerBlock + i / 2;
            q[2 * t * stride + i % 2] = quantize_q8(xb[i], s.id);
        }
    }
}

void quantize_row_q8(const float* x, int64_t K, int16_t* q, float* scale) {
    quantize_row_strided(x, K, q, scale, 1);
}

void quantize_panel_q8(const float* x, int64_t rows, int64_t ldx, int64_t nblocks, int16_t* q,
                       float* scale) {
    for (int64_t r = 0; r < QR; ++r) {
        if (r < rows) {
            quantize_row_strided(x + r * ldx, nblocks * kQ8Block, q + 2 * r, scale + r, QR);
            continue;
        }
        for (int64_t t = 0; t < nblocks * kQ8PairsPerBlock; ++t) {
            q[2 * (t * QR + r)] = q[2 * (t * QR + r) + 1] = 0;
        }
        for (int64_t b = 0; b < nblocks; ++b) scale[b * QR + r] = 0.0f;
    }
}

void matvec_f32(const float* x, int64_t K, const float* panel, float* out) {
    float acc[kPanel] = {};
    for (int64_t k = 0; k < K; ++k) {
        for (int64_t j = 0; j < kPanel; ++j) acc[j] += x[k] * panel[k * kPanel + j];
    }
    std::memcpy(out, acc, sizeof acc);
}

void matvec_f16(const float* x, int64_t K, const uint16_t* panel, float* out) {
    float acc[kPanel] = {};
    for (int64_t k = 0; k < K; ++k) {
        for (int64_t j = 0; j < kPanel; ++j) acc[j] += x[k] * f16_to_f32(panel[k * kPanel + j]);
    }
    std::memcpy(out, acc, sizeof acc);
}

void matvec_q8(const int16_t* xq, const float* x_scale, int64_t nblocks, const uint8_t* panel,
               float* out) {
    float acc[kPanel] = {};
    int32_t isum[1][kPanel];
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const float* w_scale = reinterpret_cast<const float*>(panel);
        block_dot_q8(reinterpret_cast<const int8_t*>(panel + kPanel * sizeof(float)), xq, 1, isum);
        for (int64_t j = 0; j < kPanel; ++j) {
            acc[j] += w_scale[j] * x_scale[blk] * static_cast<float>(isum[0][j]);
        }
        xq += 2 * kQ8PairsPerBlock;
        panel += kQ8PanelBlockBytes;
    }
    std::memcpy(out, acc, sizeof acc);
}

}  // namespace

void add_matmul_kernels_scalar(KernelTable& t) {
    t.matmul = MatmulKernels{tile_f32,      tile_q8,         widen_q8,          f16_to_f32_n,
                             pack_rows_f32, quantize_row_q8, quantize_panel_q8, matvec_f32,
                             matvec_f16,    matvec_q8,
                             nullptr,       nullptr,         nullptr,   nullptr,   // no VNNI,
                             nullptr,                                              // no f32 pair tile
                             nullptr,       nullptr,         nullptr,   nullptr,   // no BF16
                             nullptr,       nullptr,         0,         nullptr};  // add_matmul_kquant_scalar
}

}  // namespace pk::kernels
