// AVX-512 transpose_padded (transpose.h): 16 x 16 tiles transposed in registers, partial tiles
// through masked loads and stores. A copy, so the floats are the portable version's.
#include <immintrin.h>

#include <cstring>

#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx512.h"

namespace pk::kernels {
namespace {

using vec512::first_lanes;

void transpose_padded(const float* src, int64_t n, int64_t cols, int64_t lds, float* dst, int64_t ldd) {
    for (int64_t t0 = 0; t0 < n; t0 += 16) {
        const int64_t nt = n - t0 < 16 ? n - t0 : 16;
        for (int64_t c0 = 0; c0 < cols; c0 += 16) {
            const int64_t nc = cols - c0 < 16 ? cols - c0 : 16;
            __m512 r[16];
            for (int64_t i = 0; i < 16; ++i)
                r[i] = i < nt ? _mm512_maskz_loadu_ps(first_lanes(nc), src + (t0 + i) * lds + c0) : _mm512_setzero_ps();
            vec512::transpose16(r);
            for (int64_t j = 0; j < nc; ++j) _mm512_mask_storeu_ps(dst + (c0 + j) * ldd + t0, first_lanes(nt), r[j]);
        }
    }
    if (ldd > n)
        for (int64_t c = 0; c < cols; ++c)
            std::memset(dst + c * ldd + n, 0, static_cast<size_t>(ldd - n) * sizeof(float));
}

}  // namespace

void add_transpose_avx512(KernelTable& t) { t.attention.transpose_padded = transpose_padded; }

}  // namespace pk::kernels
