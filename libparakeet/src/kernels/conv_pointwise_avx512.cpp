// AVX-512 pointwise conv: the AVX2 kernel's register tiling at full width, for the CPUs (Zen 5,
// Intel cores) whose zmm multiply-adds run at twice the ymm rate. A tile is 12 pixel rows x two
// 16-channel panels (24 zmm accumulators), or 12 rows x one panel for an odd last panel; both
// panels (Cin x 32 floats) stay in L1 while a block of 48 rows streams through them. Each output
// is the AVX2 kernel's chain, fused multiply-adds over the input channels in order from 0 and
// then the bias, so the two levels give the same bits and the split of rows changes none.
#include <immintrin.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx512.h"

namespace pk::kernels {
namespace {

using matmul_detail::kPanel;  // 16 output channels, one zmm: the packing's panel (matmul_layout.h)
constexpr int64_t kTileRows = 12;
constexpr int64_t kBlockRows = 48;

// The epilogue of one panel: bias, ReLU, and the lanes of the panel that are output channels.
struct Epilogue {
    __m512 bias;
    bool relu;
    __mmask16 cols;
};

Epilogue epilogue(const float* bias, bool relu, int64_t o0, int64_t cout) {
    const __mmask16 cols = vec512::first_lanes(cout - o0);
    return {bias ? _mm512_maskz_loadu_ps(cols, bias + o0) : _mm512_setzero_ps(), relu, cols};
}

inline void store(float* y, __m512 c, const Epilogue& e) {
    c = _mm512_add_ps(c, e.bias);
    if (e.relu) c = _mm512_max_ps(c, _mm512_setzero_ps());
    _mm512_mask_storeu_ps(y, e.cols, c);
}

// M rows x P (1 or 2) panels starting at `panel` (panels are Cin x 16 floats, one after another).
template <int M, int P>
void tile(const float* x, int64_t cin, const float* panel, const Epilogue* e, float* y, int64_t ldy) {
    __m512 c[P][M];
    for (int p = 0; p < P; ++p)
        for (int m = 0; m < M; ++m) c[p][m] = _mm512_setzero_ps();
    for (int64_t i = 0; i < cin; ++i) {
        __m512 b[P];
        for (int p = 0; p < P; ++p) b[p] = _mm512_loadu_ps(panel + p * cin * kPanel + i * kPanel);
        for (int m = 0; m < M; ++m) {
            const __m512 a = _mm512_set1_ps(x[m * cin + i]);
            for (int p = 0; p < P; ++p) c[p][m] = _mm512_fmadd_ps(a, b[p], c[p][m]);
        }
    }
    for (int p = 0; p < P; ++p)
        for (int m = 0; m < M; ++m) store(y + m * ldy + p * kPanel, c[p][m], e[p]);
}

template <int P>
void rows_tile(int64_t rows, const float* x, int64_t cin, const float* panel, const Epilogue* e, float* y,
               int64_t ldy) {
    switch (rows) {
        case 1: tile<1, P>(x, cin, panel, e, y, ldy); break;
        case 2: tile<2, P>(x, cin, panel, e, y, ldy); break;
        case 3: tile<3, P>(x, cin, panel, e, y, ldy); break;
        case 4: tile<4, P>(x, cin, panel, e, y, ldy); break;
        case 5: tile<5, P>(x, cin, panel, e, y, ldy); break;
        case 6: tile<6, P>(x, cin, panel, e, y, ldy); break;
        case 7: tile<7, P>(x, cin, panel, e, y, ldy); break;
        case 8: tile<8, P>(x, cin, panel, e, y, ldy); break;
        case 9: tile<9, P>(x, cin, panel, e, y, ldy); break;
        case 10: tile<10, P>(x, cin, panel, e, y, ldy); break;
        case 11: tile<11, P>(x, cin, panel, e, y, ldy); break;
        default: tile<kTileRows, P>(x, cin, panel, e, y, ldy); break;
    }
}

void pointwise_conv_rows(const float* x, int64_t cin, const float* packed, int64_t cout, const float* bias,
                         bool relu, int64_t row_begin, int64_t row_end, float* y) {
    for (int64_t r0 = row_begin; r0 < row_end; r0 += kBlockRows) {
        const int64_t r1 = r0 + kBlockRows < row_end ? r0 + kBlockRows : row_end;
        for (int64_t o0 = 0; o0 < cout; o0 += 2 * kPanel) {
            const Epilogue e[2] = {epilogue(bias, relu, o0, cout), epilogue(bias, relu, o0 + kPanel, cout)};
            const float* panel = packed + o0 * cin;
            const bool pair = o0 + kPanel < cout;
            for (int64_t r = r0; r < r1; r += kTileRows) {
                const int64_t rows = r1 - r < kTileRows ? r1 - r : kTileRows;
                if (pair)
                    rows_tile<2>(rows, x + r * cin, cin, panel, e, y + r * cout + o0, cout);
                else
                    rows_tile<1>(rows, x + r * cin, cin, panel, e, y + r * cout + o0, cout);
            }
        }
    }
}

}  // namespace

void add_conv_pointwise_avx512(KernelTable& t) { t.conv.pointwise_conv_rows = pointwise_conv_rows; }

}  // namespace pk::kernels
