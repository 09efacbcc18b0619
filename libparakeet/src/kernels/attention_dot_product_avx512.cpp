// AVX-512 BF16 kernels of the dot-product attention's bf16 products (contracts in
// attention_dot_product_bf16.h). A register tile is 4 query rows x 64 columns (16 zmm
// accumulators): for the scores 64 keys, one pair of channels per step; for the weighted sums
// 64 value channels, one pair of keys per step. Each step loads 4 packed vectors and
// broadcasts one pair per row, so the loads stay well below the vdpbf16ps rate. Called only
// where the CPU has AVX512_BF16.
#include <immintrin.h>
#include <math.h>

#include <cstdint>

#include "kernels/attention_dot_product_bf16.h"
#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx512.h"

#define PK_UNROLL _Pragma("GCC unroll 4")

namespace pk::kernels {
namespace {

using namespace dot_product_bf16;
constexpr int R = static_cast<int>(kRowTile);

// 16 floats rounded to bfloat16 (vcvtneps2bf16: nearest, ties to even), each in the lower half
// of a 32-bit lane.
inline __m512i bf16_lanes(__m512 x) {
    return _mm512_cvtepu16_epi32(reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x)));
}

// 16 floats rounded to bfloat16, packed as 8 pairs (the lower half the even element).
inline __m256i bf16_pairs(__m512 x) { return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x)); }

inline __m512bh as_bh(__m512i x) { return reinterpret_cast<__m512bh>(x); }

void pack_head(const float* k, const float* v, int64_t ld, int64_t T, int64_t dk, uint32_t* keys, uint32_t* values) {
    const int64_t dk2 = pairs(dk), ldk = key_stride(T), ldv = value_stride(dk);
    // Keys: each row's pairs, then scattered down the columns (a transpose of 32-bit words).
    alignas(32) uint32_t row[8];
    for (int64_t j = 0; j < T; ++j) {
        for (int64_t c = 0; c < dk; c += 16) {
            _mm256_store_si256(reinterpret_cast<__m256i*>(row),
                               bf16_pairs(_mm512_maskz_loadu_ps(vec512::first_lanes(dk - c), k + j * ld + c)));
            const int64_t n = dk2 - c / 2 < 8 ? dk2 - c / 2 : 8;
            for (int64_t i = 0; i < n; ++i) keys[(c / 2 + i) * ldk + j] = row[i];
        }
    }
    for (int64_t c2 = 0; c2 < dk2; ++c2)
        for (int64_t j = T; j < ldk; ++j) keys[c2 * ldk + j] = 0;
    // Values: rows 2 j2 and 2 j2 + 1 interleaved lane by lane.
    for (int64_t j2 = 0; j2 < pairs(T); ++j2) {
        const float* even = v + 2 * j2 * ld;
        const bool has_odd = 2 * j2 + 1 < T;
        for (int64_t c = 0; c < ldv; c += 16) {
            const __mmask16 m = vec512::first_lanes(dk - c);
            const __m512i lo = bf16_lanes(_mm512_maskz_loadu_ps(m, even + c));
            const __m512i hi = bf16_lanes(_mm512_maskz_loadu_ps(has_odd ? m : 0, even + ld + c));
            _mm512_storeu_si512(values + j2 * ldv + c, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
        }
    }
}

// scores[r * ldk + col..col + 64) = scale * (q_r · keys of those columns), r < R.
inline void score_tile(const uint32_t* qp, int64_t dk2, const uint32_t* keys, int64_t ldk, float scale,
                       float* scores) {
    __m512 acc[R][4];
    PK_UNROLL
    for (int r = 0; r < R; ++r)
        for (int i = 0; i < 4; ++i) acc[r][i] = _mm512_setzero_ps();
    for (int64_t c2 = 0; c2 < dk2; ++c2, keys += ldk) {
        const __m512bh k0 = as_bh(_mm512_loadu_si512(keys)), k1 = as_bh(_mm512_loadu_si512(keys + 16));
        const __m512bh k2 = as_bh(_mm512_loadu_si512(keys + 32)), k3 = as_bh(_mm512_loadu_si512(keys + 48));
        PK_UNROLL
        for (int r = 0; r < R; ++r) {
            const __m512bh b = as_bh(_mm512_set1_epi32(static_cast<int>(qp[r * dk2 + c2])));
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], k0, b);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], k1, b);
            acc[r][2] = _mm512_dpbf16_ps(acc[r][2], k2, b);
            acc[r][3] = _mm512_dpbf16_ps(acc[r][3], k3, b);
        }
    }
    const __m512 s = _mm512_set1_ps(scale);
    PK_UNROLL
    for (int r = 0; r < R; ++r)
        for (int i = 0; i < 4; ++i) _mm512_storeu_ps(scores + r * ldk + 16 * i, _mm512_mul_ps(acc[r][i], s));
}

// Row r's weights bf16(exp(s_j - max s)) for j < T (zero up to ldk) into w (ldk bfloat16),
// returning their sum (of the rounded weights, so that they are normalised exactly).
inline float softmax_weights(const float* s, int64_t T, int64_t ldk, uint16_t* w) {
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int64_t j = 0; j < T; j += 16) mx = _mm512_mask_max_ps(mx, vec512::first_lanes(T - j), mx, _mm512_loadu_ps(s + j));
    const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
    __m512 sum = _mm512_setzero_ps();
    for (int64_t j = 0; j < ldk; j += 16) {
        const __m512 e = _mm512_maskz_mov_ps(vec512::first_lanes(T - j), vec512::exp(_mm512_sub_ps(_mm512_loadu_ps(s + j), m)));
        const __m256i e16 = bf16_pairs(e);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(w + j), e16);
        sum = _mm512_add_ps(sum, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(e16), 16)));
    }
    return _mm512_reduce_add_ps(sum);
}

// out_r[c0 + 16 i ...] = inv[r] * sum over key pairs of w_r · values, for NV vectors of 16
// channels (the last masked to dk) and r < rows.
template <int NV>
inline void weighted_sum_tile(const uint32_t* w, int64_t ldw, const uint32_t* values, int64_t ldv, int64_t T2,
                              const float* inv, int rows, int64_t dk_left, float* out, int64_t ldo) {
    __m512 acc[R][NV];
    PK_UNROLL
    for (int r = 0; r < R; ++r)
        for (int i = 0; i < NV; ++i) acc[r][i] = _mm512_setzero_ps();
    for (int64_t j2 = 0; j2 < T2; ++j2, values += ldv) {
        __m512bh vv[NV];
        PK_UNROLL
        for (int i = 0; i < NV; ++i) vv[i] = as_bh(_mm512_loadu_si512(values + 16 * i));
        PK_UNROLL
        for (int r = 0; r < R; ++r) {
            const __m512bh b = as_bh(_mm512_set1_epi32(static_cast<int>(w[r * ldw + j2])));
            PK_UNROLL
            for (int i = 0; i < NV; ++i) acc[r][i] = _mm512_dpbf16_ps(acc[r][i], vv[i], b);
        }
    }
    for (int r = 0; r < rows; ++r) {
        const __m512 f = _mm512_set1_ps(inv[r]);
        for (int i = 0; i < NV; ++i)
            _mm512_mask_storeu_ps(out + r * ldo + 16 * i, vec512::first_lanes(dk_left - 16 * i), _mm512_mul_ps(acc[r][i], f));
    }
}

void attend_rows(const uint32_t* keys, const uint32_t* values, int64_t T, int64_t dk, const float* q, int64_t ldq,
                 int64_t nr, float scale, float* scratch, float* out, int64_t ldo) {
    const int64_t dk2 = pairs(dk), ldk = key_stride(T), ldv = value_stride(dk), T2 = pairs(T);
    uint32_t* qp = reinterpret_cast<uint32_t*>(scratch);
    float* scores = scratch + R * dk2;
    uint32_t* w = reinterpret_cast<uint32_t*>(scores + R * ldk);  // R rows of ldk / 2 pairs
    for (int64_t r0 = 0; r0 < nr; r0 += R) {
        const int rows = nr - r0 < R ? static_cast<int>(nr - r0) : R;
        // The tile's queries as bf16 pairs; rows past nr are zero (their results are dropped).
        for (int r = 0; r < R; ++r) {
            for (int64_t c = 0; c < 2 * dk2; c += 16) {
                const __mmask16 m = r < rows ? vec512::first_lanes(dk - c) : 0;
                const __m256i p = bf16_pairs(_mm512_maskz_loadu_ps(m, q + (r0 + r) * ldq + c));
                _mm256_mask_storeu_epi32(qp + r * dk2 + c / 2, static_cast<__mmask8>(vec512::first_lanes(dk2 - c / 2)), p);
            }
        }
        for (int64_t col = 0; col < ldk; col += kKeyTile) score_tile(qp, dk2, keys + col, ldk, scale, scores + col);
        float inv[R];
        for (int r = 0; r < R; ++r)
            inv[r] = 1.0f / softmax_weights(scores + r * ldk, T, ldk, reinterpret_cast<uint16_t*>(w + r * (ldk / 2)));
        float* o = out + r0 * ldo;
        int64_t c0 = 0;
        for (; c0 + 64 <= ldv; c0 += 64)
            weighted_sum_tile<4>(w, ldk / 2, values + c0, ldv, T2, inv, rows, dk - c0, o + c0, ldo);
        switch ((ldv - c0) / 16) {
            case 3: weighted_sum_tile<3>(w, ldk / 2, values + c0, ldv, T2, inv, rows, dk - c0, o + c0, ldo); break;
            case 2: weighted_sum_tile<2>(w, ldk / 2, values + c0, ldv, T2, inv, rows, dk - c0, o + c0, ldo); break;
            case 1: weighted_sum_tile<1>(w, ldk / 2, values + c0, ldv, T2, inv, rows, dk - c0, o + c0, ldo); break;
            default: break;
        }
    }
}

}  // namespace

void add_attention_dot_product_avx512(KernelTable& t) {
    t.attention.bf16_pack_head = pack_head;
    t.attention.bf16_attend_rows = attend_rows;
}

}  // namespace pk::kernels
