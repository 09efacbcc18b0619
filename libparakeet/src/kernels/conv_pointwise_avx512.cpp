// AVX-512 pointwise conv: the AVX2 kernel's register tiling (conv_pointwise_avx2.cpp) with a
// 16-channel weight panel in one zmm register, so a tile is 12 pixel rows x 2 panels (24
// accumulators) and each broadcast pixel value feeds two multiply-adds of 16 lanes; both panels
// (Cin x 32 floats) stay in L1 while a block of 48 rows streams through them. It serves the
// FastConformer subsampling's pointwise convs and the speaker encoders' 2-D conv products
// (Winograd's per-position products, the unfolded convs). Each output is the same chain of
// multiply-adds over the input channels in order, then the bias (and ReLU), as in the AVX2
// kernel, so the two levels give the same bits, in full and partial tiles alike, and the split
// of rows across threads changes none.
#include <immintrin.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx512.h"

// The row loops must be unrolled for the accumulator arrays to live in registers (as in
// attention_rel_pos_avx512.cpp).
#define PK_UNROLL_ROWS _Pragma("GCC unroll 12")

namespace pk::kernels {
namespace {

constexpr int64_t kPanel = 16;
constexpr int64_t kTileRows = 12;
constexpr int64_t kBlockRows = 48;

// Output channels [o0, o0 + 16) of the panels handled: the bias and the lanes to store.
struct Epilogue {
    __m512 bias;
    __mmask16 lanes;
};

Epilogue epilogue(const float* bias, int64_t o0, int64_t cout) {
    const __mmask16 lanes = vec512::first_lanes(cout - o0);
    return {bias ? _mm512_maskz_loadu_ps(lanes, bias + o0) : _mm512_setzero_ps(), lanes};
}

// M pixel rows x NP panels (NP = 1 or 2) from `panel` on (panels cin * 16 floats apart).
template <int M, int NP>
void tile(const float* x, int64_t cin, const float* panel, const Epilogue* e, bool relu, float* y, int64_t ldy) {
    __m512 c[NP][M];
    PK_UNROLL_ROWS
    for (int m = 0; m < M; ++m)
        for (int p = 0; p < NP; ++p) c[p][m] = _mm512_setzero_ps();
    for (int64_t i = 0; i < cin; ++i) {
        __m512 b[NP];
        for (int p = 0; p < NP; ++p) b[p] = _mm512_loadu_ps(panel + p * cin * kPanel + i * kPanel);
        PK_UNROLL_ROWS
        for (int m = 0; m < M; ++m) {
            const __m512 a = _mm512_set1_ps(x[m * cin + i]);
            for (int p = 0; p < NP; ++p) c[p][m] = _mm512_fmadd_ps(a, b[p], c[p][m]);
        }
    }
    PK_UNROLL_ROWS
    for (int m = 0; m < M; ++m)
        for (int p = 0; p < NP; ++p) {
            __m512 v = _mm512_add_ps(c[p][m], e[p].bias);
            if (relu) v = _mm512_max_ps(v, _mm512_setzero_ps());
            _mm512_mask_storeu_ps(y + m * ldy + p * kPanel, e[p].lanes, v);
        }
}

// tile<rows, NP> for rows in 1 .. M.
template <int M, int NP>
void rows_tile(int64_t rows, const float* x, int64_t cin, const float* panel, const Epilogue* e, bool relu, float* y,
               int64_t ldy) {
    if (rows == M) tile<M, NP>(x, cin, panel, e, relu, y, ldy);
    else if constexpr (M > 1) rows_tile<M - 1, NP>(rows, x, cin, panel, e, relu, y, ldy);
}

void pointwise_conv_rows(const float* x, int64_t cin, const float* packed, int64_t cout, const float* bias, bool relu,
                         int64_t row_begin, int64_t row_end, float* y) {
    for (int64_t r0 = row_begin; r0 < row_end; r0 += kBlockRows) {
        const int64_t r1 = r0 + kBlockRows < row_end ? r0 + kBlockRows : row_end;
        for (int64_t o0 = 0; o0 < cout; o0 += 2 * kPanel) {
            const bool pair = o0 + kPanel < cout;
            const Epilogue e[2] = {epilogue(bias, o0, cout), epilogue(bias, o0 + kPanel, cout)};
            const float* panel = packed + o0 * cin;
            for (int64_t r = r0; r < r1; r += kTileRows) {
                const int64_t n = r1 - r < kTileRows ? r1 - r : kTileRows;
                if (pair) rows_tile<kTileRows, 2>(n, x + r * cin, cin, panel, e, relu, y + r * cout + o0, cout);
                else rows_tile<kTileRows, 1>(n, x + r * cin, cin, panel, e, relu, y + r * cout + o0, cout);
            }
        }
    }
}

}  // namespace

void add_conv_pointwise_avx512(KernelTable& t) { t.conv.pointwise_conv_rows = pointwise_conv_rows; }

}  // namespace pk::kernels
