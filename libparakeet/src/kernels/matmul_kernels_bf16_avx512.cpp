// The opt-in BF16 matmul kernels (AVX-512 BF16): vdpbf16ps on bfloat16 weights and
// activations, accumulating in f32.
//
// vdpbf16ps multiplies two pairs of bfloat16 per 32-bit lane and adds both products to the
// lane's float: one zmm of weights is 16 outputs x 2 k (matmul_layout.h), one broadcast
// 32-bit word the same 2 k of one activation row. That is 32 multiply-adds per instruction
// where an f32 FMA does 16, at the same rate on Zen 4: twice the f32 peak, for 8 bits of
// mantissa on both sides instead of 24 (docs/performance.md measures speed and token
// agreement). Only called where the CPU has AVX512_BF16: BF16 weights are packed nowhere else.
//
// Each output is one chain of vdpbf16ps per K slice in a fixed order, whatever tile, row
// count or thread it lands in, so results do not depend on the thread count.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/kernel_table.h"
#include "kernels/matmul_store_avx512.h"

// See matmul_kernels_avx512.cpp: a false positive of GCC 12's AVX-512 headers at -O3.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

constexpr int64_t BR = kRowsBf16;

inline __m512bh load_pair_panel(const uint16_t* b) {
    return reinterpret_cast<__m512bh>(_mm512_load_si512(b));
}

// The same 2 k of one row in every lane.
inline __m512bh broadcast_pair(const uint32_t* a) {
    return reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(*a)));
}

// Tile of R <= 8 rows: each pair of weights is loaded once and feeds R independent chains,
// enough to cover vdpbf16ps's latency.
template <int R>
void tile_bf16_rows(int64_t kc, const uint32_t* a, const uint16_t* b, float* c, int64_t ldc,
                    const float* bias, bool accumulate) {
    for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
    __m512 acc[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int64_t t = 0; t < kc; ++t) {
        const __m512bh w = load_pair_panel(b);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) acc[r] = _mm512_dpbf16_ps(acc[r], w, broadcast_pair(a + r));
        a += BR;
        b += 2 * kPanel;
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) store_row_avx512(c + r * ldc, acc[r], bias, accumulate);
}

void tile_bf16(int64_t rows, int64_t kc, const uint32_t* a, const uint16_t* b, float* c,
               int64_t ldc, const float* bias, bool accumulate) {
    static_assert(BR == 8, "one instantiation per row count");
    switch (rows) {
        case 8: return tile_bf16_rows<8>(kc, a, b, c, ldc, bias, accumulate);
        case 7: return tile_bf16_rows<7>(kc, a, b, c, ldc, bias, accumulate);
        case 6: return tile_bf16_rows<6>(kc, a, b, c, ldc, bias, accumulate);
        case 5: return tile_bf16_rows<5>(kc, a, b, c, ldc, bias, accumulate);
        case 4: return tile_bf16_rows<4>(kc, a, b, c, ldc, bias, accumulate);
        case 3: return tile_bf16_rows<3>(kc, a, b, c, ldc, bias, accumulate);
        case 2: return tile_bf16_rows<2>(kc, a, b, c, ldc, bias, accumulate);
        default: return tile_bf16_rows<1>(kc, a, b, c, ldc, bias, accumulate);
    }
}

// Converts columns [0, k_valid) of one row to bf16 pairs (round to nearest even), zero past
// k_valid up to `pairs` words, and writes pair t to out[t * stride].
void row_pairs(const float* x, int64_t k_valid, int64_t pairs, uint32_t* out, int64_t stride) {
    alignas(64) uint32_t words[16];
    for (int64_t t0 = 0; t0 < pairs; t0 += 16) {
        const int64_t k0 = 2 * t0;
        const int64_t left = k_valid - k0;
        const __mmask16 m_lo = left >= 16 ? 0xFFFF : left > 0 ? static_cast<__mmask16>((1u << left) - 1) : 0;
        const int64_t left_hi = left - 16;
        const __mmask16 m_hi =
            left_hi >= 16 ? 0xFFFF : left_hi > 0 ? static_cast<__mmask16>((1u << left_hi) - 1) : 0;
        const __m512 lo = _mm512_maskz_loadu_ps(m_lo, x + k0);
        const __m512 hi = _mm512_maskz_loadu_ps(m_hi, x + k0 + 16);
        // Lower 16 bf16 from the second operand: the 32 values in k order, i.e. 16 pairs.
        _mm512_store_si512(words, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo)));
        const int64_t n = pairs - t0 < 16 ? pairs - t0 : 16;
        if (stride == 1) {
            std::memcpy(out + t0, words, static_cast<size_t>(n) * sizeof(uint32_t));
        } else {
            for (int64_t i = 0; i < n; ++i) out[(t0 + i) * stride] = words[i];
        }
    }
}

void pack_rows_bf16(const float* x, int64_t rows, int64_t ldx, int64_t kc, int64_t k_valid,
                    uint32_t* a) {
    for (int64_t r = 0; r < BR; ++r) {
        if (r < rows) {
            row_pairs(x + r * ldx, k_valid, kc, a + r, BR);
        } else {
            for (int64_t t = 0; t < kc; ++t) a[t * BR + r] = 0;
        }
    }
}

void row_to_bf16(const float* x, int64_t K, uint32_t* pairs) { row_pairs(x, K, (K + 1) / 2, pairs, 1); }

// Memory bound: two chains, summed at the end.
void matvec_bf16(const uint32_t* x_pairs, int64_t k_pairs, const uint16_t* panel, float* out) {
    __m512 f0 = _mm512_setzero_ps(), f1 = _mm512_setzero_ps();
    int64_t t = 0;
    for (; t + 1 < k_pairs; t += 2) {
        f0 = _mm512_dpbf16_ps(f0, load_pair_panel(panel + 2 * kPanel * t), broadcast_pair(x_pairs + t));
        f1 = _mm512_dpbf16_ps(f1, load_pair_panel(panel + 2 * kPanel * (t + 1)),
                              broadcast_pair(x_pairs + t + 1));
    }
    if (t < k_pairs) f0 = _mm512_dpbf16_ps(f0, load_pair_panel(panel + 2 * kPanel * t), broadcast_pair(x_pairs + t));
    _mm512_storeu_ps(out, _mm512_add_ps(f0, f1));
}

}  // namespace

void add_matmul_kernels_bf16_avx512(KernelTable& t) {
    t.matmul.tile_bf16 = tile_bf16;
    t.matmul.pack_rows_bf16 = pack_rows_bf16;
    t.matmul.row_to_bf16 = row_to_bf16;
    t.matmul.matvec_bf16 = matvec_bf16;
}

}  // namespace pk::kernels
