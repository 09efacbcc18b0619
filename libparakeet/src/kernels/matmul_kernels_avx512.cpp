// AVX-512 micro-kernels of the matmul (used only at the avx512 level): Q8_0 with VNNI, and f32.
//
// vpdpbusd multiplies 4 unsigned by 4 signed bytes per 32-bit lane and adds the 4 products to
// the lane, exactly in int32. The weights, packed in quads (matmul_layout.h), are the unsigned
// side as q + 128; the activations are signed int8, and each block's integer sum starts at
// -128 * (sum of the activation block), which cancels the offset. One zmm of weights is 16
// outputs x 4 k and one broadcast 32-bit word is 4 k of one activation row, so a block of 32
// k costs 8 vpdpbusd per row. The float side is the AVX2 kernel's, element for element:
// per block acc = fma(float(isum), w_scale * x_scale, acc), so every level gives the same bits.
// Two full panels side by side run tile_q8_vnni_pair, which shares each broadcast between them.
//
// f32 / F16 (F16 is widened to f32 per panel slice by the driver): the AVX2 tile's 6 x 16 with
// one zmm per row, i.e. per k one panel load and 6 FMAs with the activation broadcast from
// memory. Each output is the same chain of FMAs over k from zero as in the AVX2 tile, so the
// bits are the same. Zen 4 runs a zmm FMA as two halves (the same peak as the ymm tile); Zen 5
// and Intel have full-width zmm FMAs, twice the ymm peak, where 6 chains fill only 6 of the 8
// FMAs that latency x pipes allows in flight: two full panels side by side therefore run
// tile_f32_pair, 12 chains (docs/performance.md, "GEMM against the core's peak").
// The f32 matrix-vector kernel, whose loads bound it, has a zmm form with the AVX2 kernel's
// bits too. The opt-in BF16 kernels are in matmul_kernels_bf16_avx512.cpp.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/kernel_table.h"
#include "kernels/matmul_store_avx512.h"
#include "kernels/matmul_vnni_avx512.h"
#include "kernels/quantize_q8_vnni_avx512.h"

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wmaybe-uninitialized
// reports at -O3 (a known false positive of the compiler's headers).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

constexpr int64_t VR = kRowsQ8Vnni;
constexpr int64_t FR = kRowsF32;

// f32 tile of R <= 6 rows (a partial last row panel computes only its rows, with the same
// instructions per element as the full tile).
template <int R>
void tile_f32_rows(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                   const float* bias, bool accumulate) {
    for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    __m512 acc[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; ++k) {
        const __m512 bk = _mm512_load_ps(b);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r]), bk, acc[r]);
        a += FR;
        b += kPanel;
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) store_row_avx512(c + r * ldc, acc[r], bias, accumulate);
}

void tile_f32(int64_t rows, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
              const float* bias, bool accumulate) {
    with_rows<FR>(rows, [&](auto R) { tile_f32_rows<R>(kc, a, b, c, ldc, bias, accumulate); });
}

// f32 tile of R <= 6 rows against two full panels: 12 FMA chains (more than the 8 that latency
// x pipes keeps busy) and per k 2 panel loads and R broadcasts for 2 R FMAs. Per output the
// operations are tile_f32_rows's, in the same order.
template <int R>
void tile_f32_pair_rows(int64_t kc, const float* a, const float* b0, const float* b1, float* c, int64_t ldc,
                        const float* bias, bool accumulate) {
    for (int r = 0; r < R; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kPanel), _MM_HINT_T0);
    }
    __m512 acc0[R], acc1[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int64_t k = 0; k < kc; ++k) {
        const __m512 u0 = _mm512_load_ps(b0), u1 = _mm512_load_ps(b1);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            const __m512 x = _mm512_set1_ps(a[r]);
            acc0[r] = _mm512_fmadd_ps(x, u0, acc0[r]);
            acc1[r] = _mm512_fmadd_ps(x, u1, acc1[r]);
        }
        a += FR;
        b0 += kPanel;
        b1 += kPanel;
    }
    store_pair_rows_avx512<R>(c, ldc, acc0, acc1, bias, accumulate);
}

void tile_f32_pair(int64_t rows, int64_t kc, const float* a, const float* b0, const float* b1, float* c,
                   int64_t ldc, const float* bias, bool accumulate) {
    with_rows<FR>(rows, [&](auto R) { tile_f32_pair_rows<R>(kc, a, b0, b1, c, ldc, bias, accumulate); });
}

// acc += w_scale * x_scale * isum, for 16 outputs (the order of scale_add in the AVX2 file).
inline __m512 scale_add(__m512i isum, __m512 w_scale, __m512 x_scale, __m512 acc) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(w_scale, x_scale), acc);
}

// Q8_0 tile of R <= 8 rows: the 8 weight vectors of a block are loaded once and used by every
// row; the R integer sums are independent chains, which hides vpdpbusd's latency.
template <int R>
void tile_q8_vnni_rows(int64_t nblocks, const int8_t* a, const float* a_scale,
                       const int32_t* a_corr, const uint8_t* b, float* c, int64_t ldc,
                       const float* bias, bool accumulate) {
    for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    __m512 f[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) f[r] = _mm512_setzero_ps();
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const __m512i* w = reinterpret_cast<const __m512i*>(b + kPanel * sizeof(float));
        __m512i acc[R];
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[r] = _mm512_set1_epi32(a_corr[r]);
#pragma GCC unroll 8
        for (int t = 0; t < kQ8QuadsPerBlock; ++t) {
            const __m512i wt = _mm512_load_si512(w + t);
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) {
                acc[r] = dpbusd_broadcast(acc[r], wt, a + r * kQ8Block + 4 * t);
            }
        }
        const __m512 ws = _mm512_load_ps(reinterpret_cast<const float*>(b));
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) f[r] = scale_add(acc[r], ws, _mm512_set1_ps(a_scale[r]), f[r]);
        a += VR * kQ8Block;
        a_scale += VR;
        a_corr += VR;
        b += kQ8PanelBlockBytes;
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) store_row_avx512(c + r * ldc, f[r], bias, accumulate);
}

void tile_q8_vnni(int64_t rows, int64_t nblocks, const int8_t* a, const float* a_scale,
                  const int32_t* a_corr, const uint8_t* b, float* c, int64_t ldc,
                  const float* bias, bool accumulate) {
    with_rows<VR>(rows, [&](auto R) {
        tile_q8_vnni_rows<R>(nblocks, a, a_scale, a_corr, b, c, ldc, bias, accumulate);
    });
}

// Rows [h, h + R) of a VNNI row panel against two panels, R <= 4: each broadcast quad of
// activations feeds both panels' vpdpbusd. The single-panel tile issues 89 loads per 64
// vpdpbusd (a broadcast per product, plus the weights and each row's corr and scale) and,
// at two loads per cycle (Zen 5), is load bound at ~72 % of the vpdpbusd peak; here it is
// 58 per 64. 4 rows x 2 panels is what 32 registers hold (8 integer sums, 8 float
// accumulators). Per output the operations are tile_q8_vnni_rows's, in the same order.
template <int R>
void tile_q8_vnni_pair_rows(int64_t nblocks, const int8_t* a, const float* a_scale, const int32_t* a_corr,
                            const uint8_t* b0, const uint8_t* b1, float* c, int64_t ldc, const float* bias,
                            bool accumulate) {
    for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    __m512 f0[R], f1[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) f0[r] = f1[r] = _mm512_setzero_ps();
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const __m512i* w0 = reinterpret_cast<const __m512i*>(b0 + kPanel * sizeof(float));
        const __m512i* w1 = reinterpret_cast<const __m512i*>(b1 + kPanel * sizeof(float));
        __m512i acc0[R], acc1[R];
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_set1_epi32(a_corr[r]);
#pragma GCC unroll 8
        for (int t = 0; t < kQ8QuadsPerBlock; ++t) {
            const __m512i u0 = _mm512_load_si512(w0 + t), u1 = _mm512_load_si512(w1 + t);
#pragma GCC unroll 4
            for (int r = 0; r < R; ++r) {
                int32_t quad;
                std::memcpy(&quad, a + r * kQ8Block + 4 * t, sizeof quad);
                const __m512i q = _mm512_set1_epi32(quad);
                acc0[r] = _mm512_dpbusd_epi32(acc0[r], u0, q);
                acc1[r] = _mm512_dpbusd_epi32(acc1[r], u1, q);
            }
        }
        const __m512 ws0 = _mm512_load_ps(reinterpret_cast<const float*>(b0));
        const __m512 ws1 = _mm512_load_ps(reinterpret_cast<const float*>(b1));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const __m512 xs = _mm512_set1_ps(a_scale[r]);
            f0[r] = scale_add(acc0[r], ws0, xs, f0[r]);
            f1[r] = scale_add(acc1[r], ws1, xs, f1[r]);
        }
        a += VR * kQ8Block;
        a_scale += VR;
        a_corr += VR;
        b0 += kQ8PanelBlockBytes;
        b1 += kQ8PanelBlockBytes;
    }
    store_pair_rows_avx512<R>(c, ldc, f0, f1, bias, accumulate);
}

// MatmulKernels::tile_q8_vnni_pair: rows 0..3, then 4..7 (each pass reads both panels' slices
// from L1).
void tile_q8_vnni_pair(int64_t rows, int64_t nblocks, const int8_t* a, const float* a_scale,
                       const int32_t* a_corr, const uint8_t* b0, const uint8_t* b1, float* c, int64_t ldc,
                       const float* bias, bool accumulate) {
    static_assert(VR == 8, "two halves of four rows");
    for (int64_t h = 0; h < rows; h += 4) {
        with_rows<4>(rows - h, [&](auto R) {
            tile_q8_vnni_pair_rows<R>(nblocks, a + h * kQ8Block, a_scale + h, a_corr + h, b0, b1, c + h * ldc,
                                      ldc, bias, accumulate);
        });
    }
}

// Memory bound: two integer chains per block, and the blocks overlap out of order.
void matvec_q8_vnni(const int8_t* xq, const float* x_scale, const int32_t* x_corr,
                    int64_t nblocks, const uint8_t* panel, float* out) {
    __m512 f = _mm512_setzero_ps();
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const __m512i* w = reinterpret_cast<const __m512i*>(panel + kPanel * sizeof(float));
        __m512i i0 = _mm512_set1_epi32(x_corr[blk]), i1 = _mm512_setzero_si512();
        for (int t = 0; t < kQ8QuadsPerBlock; t += 2) {
            i0 = dpbusd_broadcast(i0, _mm512_load_si512(w + t), xq + 4 * t);
            i1 = dpbusd_broadcast(i1, _mm512_load_si512(w + t + 1), xq + 4 * t + 4);
        }
        f = scale_add(_mm512_add_epi32(i0, i1), _mm512_load_ps(reinterpret_cast<const float*>(panel)),
                      _mm512_set1_ps(x_scale[blk]), f);
        xq += kQ8Block;
        panel += kQ8PanelBlockBytes;
    }
    _mm512_storeu_ps(out, f);
}

// The AVX2 matvec_f32 with each pair of its ymm accumulators (columns 0-7 and 8-15 of one k
// stream) as one zmm: the same four k streams summed in the same order, so the same bits,
// with half the loads and multiply-adds (the batched decoder's LSTM rows run on it).
void matvec_f32(const float* x, int64_t K, const float* panel, float* out) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
        const float* p = panel + k * kPanel;
        a0 = _mm512_fmadd_ps(_mm512_set1_ps(x[k]), _mm512_loadu_ps(p), a0);
        a1 = _mm512_fmadd_ps(_mm512_set1_ps(x[k + 1]), _mm512_loadu_ps(p + 16), a1);
        a2 = _mm512_fmadd_ps(_mm512_set1_ps(x[k + 2]), _mm512_loadu_ps(p + 32), a2);
        a3 = _mm512_fmadd_ps(_mm512_set1_ps(x[k + 3]), _mm512_loadu_ps(p + 48), a3);
    }
    for (; k < K; ++k) a0 = _mm512_fmadd_ps(_mm512_set1_ps(x[k]), _mm512_loadu_ps(panel + k * kPanel), a0);
    _mm512_storeu_ps(out, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

}  // namespace

void add_matmul_kernels_avx512(KernelTable& t) {
    t.matmul.tile_f32 = tile_f32;
    t.matmul.tile_f32_pair = tile_f32_pair;
    t.matmul.tile_q8_vnni = tile_q8_vnni;
    t.matmul.tile_q8_vnni_pair = tile_q8_vnni_pair;
    t.matmul.quantize_q8_vnni = quantize_q8_vnni_avx512;
    t.matmul.matvec_q8_vnni = matvec_q8_vnni;
    t.matmul.matvec_f32 = matvec_f32;
}

}  // namespace pk::kernels
