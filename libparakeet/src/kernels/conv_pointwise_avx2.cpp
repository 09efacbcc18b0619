// AVX2/FMA pointwise conv: a register-tiled matrix product. A tile is 6 pixel rows x 16
// output channels (12 accumulators); the packed 16-channel weight panel (Cin x 16 floats,
// 16 KiB for Cin = 256) stays in L1 while a block of 48 rows streams through it. Each output
// is a chain of fused multiply-adds over the input channels in order, then the bias, the
// same in full and partial tiles, so the split of rows across threads changes no bit.
#include <immintrin.h>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx2.h"

namespace pk::kernels {
namespace {

constexpr int64_t kPanel = 16;
constexpr int64_t kTileRows = 6;
constexpr int64_t kBlockRows = 48;

struct Epilogue {
    __m256 bias0, bias1;
    bool relu;
    int64_t cols;  // valid output channels in this panel, 1..16
};

inline void store_row(float* y, __m256 c0, __m256 c1, const Epilogue& e) {
    c0 = _mm256_add_ps(c0, e.bias0);
    c1 = _mm256_add_ps(c1, e.bias1);
    if (e.relu) {
        c0 = _mm256_max_ps(c0, _mm256_setzero_ps());
        c1 = _mm256_max_ps(c1, _mm256_setzero_ps());
    }
    if (e.cols == kPanel) {
        _mm256_storeu_ps(y, c0);
        _mm256_storeu_ps(y + 8, c1);
    } else if (e.cols >= 8) {
        _mm256_storeu_ps(y, c0);
        _mm256_maskstore_ps(y + 8, vec::tail_mask(e.cols - 8), c1);
    } else {
        _mm256_maskstore_ps(y, vec::tail_mask(e.cols), c0);
    }
}

template <int M>
void tile(const float* x, int64_t cin, const float* panel, const Epilogue& e, float* y,
          int64_t ldy) {
    __m256 c0[M], c1[M];
    for (int m = 0; m < M; ++m) c0[m] = c1[m] = _mm256_setzero_ps();
    for (int64_t i = 0; i < cin; ++i) {
        const __m256 b0 = _mm256_loadu_ps(panel + i * kPanel);
        const __m256 b1 = _mm256_loadu_ps(panel + i * kPanel + 8);
        for (int m = 0; m < M; ++m) {
            const __m256 a = _mm256_broadcast_ss(x + m * cin + i);
            c0[m] = _mm256_fmadd_ps(a, b0, c0[m]);
            c1[m] = _mm256_fmadd_ps(a, b1, c1[m]);
        }
    }
    for (int m = 0; m < M; ++m) store_row(y + m * ldy, c0[m], c1[m], e);
}

void partial_tile(int64_t rows, const float* x, int64_t cin, const float* panel,
                  const Epilogue& e, float* y, int64_t ldy) {
    switch (rows) {
        case 1: tile<1>(x, cin, panel, e, y, ldy); break;
        case 2: tile<2>(x, cin, panel, e, y, ldy); break;
        case 3: tile<3>(x, cin, panel, e, y, ldy); break;
        case 4: tile<4>(x, cin, panel, e, y, ldy); break;
        case 5: tile<5>(x, cin, panel, e, y, ldy); break;
        default: break;
    }
}

void pointwise_conv_rows(const float* x, int64_t cin, const float* packed, int64_t cout,
                         const float* bias, bool relu, int64_t row_begin, int64_t row_end,
                         float* y) {
    for (int64_t r0 = row_begin; r0 < row_end; r0 += kBlockRows) {
        const int64_t r1 = r0 + kBlockRows < row_end ? r0 + kBlockRows : row_end;
        for (int64_t o0 = 0; o0 < cout; o0 += kPanel) {
            Epilogue e;
            e.relu = relu;
            e.cols = cout - o0 < kPanel ? cout - o0 : kPanel;
            if (!bias) {
                e.bias0 = e.bias1 = _mm256_setzero_ps();
            } else if (e.cols == kPanel) {
                e.bias0 = _mm256_loadu_ps(bias + o0);
                e.bias1 = _mm256_loadu_ps(bias + o0 + 8);
            } else {
                e.bias0 = _mm256_maskload_ps(bias + o0, vec::tail_mask(e.cols < 8 ? e.cols : 8));
                e.bias1 = e.cols > 8 ? _mm256_maskload_ps(bias + o0 + 8, vec::tail_mask(e.cols - 8))
                                     : _mm256_setzero_ps();
            }
            const float* panel = packed + o0 * cin;
            int64_t r = r0;
            for (; r + kTileRows <= r1; r += kTileRows)
                tile<kTileRows>(x + r * cin, cin, panel, e, y + r * cout + o0, cout);
            if (r < r1) partial_tile(r1 - r, x + r * cin, cin, panel, e, y + r * cout + o0, cout);
        }
    }
}

}  // namespace

void add_conv_pointwise_avx2(KernelTable& t) {
    t.conv.pointwise_conv_rows = pointwise_conv_rows;
}

}  // namespace pk::kernels
