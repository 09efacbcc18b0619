// The unsigned-form tile with AVX2: vpmaddubsw multiplies pairs of unsigned weights by signed
// activations (|u q| <= 63 * 127, so a pair never saturates int16), vpmaddwd adds the pairs of
// each quad. Same float operations, in the same order, as the portable tile.
#include <immintrin.h>

#include "kernels/kernel_table.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

// The integer sums of one row over one unit for outputs [8 g, 8 g + 8): isum[h] over half h.
inline void unit_sums(const uint8_t* u, const int32_t* quad, int64_t g, __m256i isum[2]) {
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t h = 0; h < 2; ++h) {
        __m256i s = _mm256_setzero_si256();
        for (int64_t t = 4 * h; t < 4 * h + 4; ++t) {
            const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + 64 * t + 32 * g));
            const __m256i p = _mm256_maddubs_epi16(w, _mm256_set1_epi32(quad[t]));
            s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
        }
        isum[h] = s;
    }
}

template <bool kHalves>
void tile_kq_avx2(int64_t rows, int64_t nunits, const int8_t* a, const float* a_scale, const float* a_corr,
                  const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    __m256 acc[kRowsKq][2];
    for (auto& row : acc) row[0] = row[1] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nunits; ++b) {
        const uint8_t* unit = units + static_cast<size_t>(b) * kKqUnitBytes;
        const auto* so = reinterpret_cast<const float*>(unit);
        const uint8_t* u = unit + 4 * kPanel * sizeof(float);
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t row = b * kRowsKq + r;
            int32_t quad[kQ8QuadsPerBlock];
            __builtin_memcpy(quad, a + row * kQ8Block, sizeof quad);
            const __m256 dx = _mm256_set1_ps(a_scale[row]);
            const float* corr = a_corr + row * kKqCorrPerBlock;
            for (int64_t g = 0; g < 2; ++g) {
                __m256i isum[2];
                unit_sums(u, quad, g, isum);
                const float* s = so + 8 * g;
                const float* o = so + 2 * kPanel + 8 * g;
                __m256 v = acc[r][g];
                if (kHalves) {
                    for (int64_t h = 0; h < 2; ++h) {
                        const __m256 sh = _mm256_loadu_ps(s + h * kPanel), oh = _mm256_loadu_ps(o + h * kPanel);
                        v = _mm256_fmadd_ps(_mm256_mul_ps(sh, _mm256_cvtepi32_ps(isum[h])), dx, v);
                        v = _mm256_fnmadd_ps(oh, _mm256_set1_ps(corr[h]), v);
                    }
                } else {
                    const __m256 total = _mm256_cvtepi32_ps(_mm256_add_epi32(isum[0], isum[1]));
                    v = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(s), total), dx, v);
                    v = _mm256_fnmadd_ps(_mm256_loadu_ps(o), _mm256_set1_ps(corr[2]), v);
                }
                acc[r][g] = v;
            }
        }
    }
    for (int64_t r = 0; r < rows; ++r) {
        float* cr = c + r * ldc;
        for (int64_t g = 0; g < 2; ++g) {
            __m256 v = acc[r][g];
            if (accumulate) {
                v = _mm256_add_ps(_mm256_loadu_ps(cr + 8 * g), v);
            } else if (bias) {
                v = _mm256_add_ps(v, _mm256_loadu_ps(bias + 8 * g));
            }
            _mm256_storeu_ps(cr + 8 * g, v);
        }
    }
}

void tile_kq(int64_t rows, int64_t nunits, bool halves, const int8_t* a, const float* a_scale, const float* a_corr,
             const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    if (halves) {
        tile_kq_avx2<true>(rows, nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
    } else {
        tile_kq_avx2<false>(rows, nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
    }
}

}  // namespace

void add_matmul_kquant_avx2(KernelTable& t) { t.matmul.tile_kq = tile_kq; }

}  // namespace pk::kernels
