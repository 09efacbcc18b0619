// AVX-512 kernels of the dot-product attention's int8 scores (VNNI) and bf16 weighted sums
// (AVX512_BF16; contracts in attention_dot_product_int8_bf16.h). A register tile is 4 query
// rows x 64 columns (16 zmm accumulators): for the scores 64 keys, one quad of channels per
// step, each row's quad broadcast by vpdpbusd itself (matmul_vnni_avx512.h); for the weighted
// sums 64 value channels, one pair of keys per step. Called only where the CPU has AVX512_BF16.
#include <immintrin.h>
#include <math.h>

#include <cstdint>

#include "kernels/attention_dot_product_int8_bf16.h"
#include "kernels/kernel_table.h"
#include "kernels/matmul_vnni_avx512.h"
#include "kernels/ops_vec_avx512.h"

#define PK_UNROLL _Pragma("GCC unroll 4")

namespace pk::kernels {
namespace {

using namespace dot_product_int8_bf16;
constexpr int R = static_cast<int>(kRowTile);

// 16 floats rounded to bfloat16 (vcvtneps2bf16: nearest, ties to even), each in the lower half
// of a 32-bit lane.
inline __m512i bf16_lanes(__m512 x) {
    return _mm512_cvtepu16_epi32(reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x)));
}

// 16 floats rounded to bfloat16, packed as 8 pairs (the lower half the even element).
inline __m256i bf16_pairs(__m512 x) { return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x)); }

inline __m512bh as_bh(__m512i x) { return reinterpret_cast<__m512bh>(x); }

// Keys: each key minus the keys' mean (the softmax does not see a shift common to a query's
// scores), quantised to int8 with its own scale (largest |value| / 127) and stored unsigned
// (+ 128, vpdpbusd's unsigned operand), in quads of channels down the columns; then the keys'
// scales.
void pack_keys(const float* k, int64_t ld, int64_t T, int64_t dk, uint32_t* keys) {
    const int64_t dk4 = quads(dk), ldk = key_stride(T);
    float* scale = reinterpret_cast<float*>(keys + dk4 * ldk);
    float* mean = scale + ldk;
    for (int64_t c = 0; c < dk; c += 16) {
        const __mmask16 m = vec512::first_lanes(dk - c);
        __m512 sum = _mm512_setzero_ps();
        for (int64_t j = 0; j < T; ++j) sum = _mm512_add_ps(sum, _mm512_maskz_loadu_ps(m, k + j * ld + c));
        _mm512_storeu_ps(mean + c, _mm512_div_ps(sum, _mm512_set1_ps(static_cast<float>(T))));
    }
    alignas(64) uint32_t row[16];
    for (int64_t j = 0; j < T; ++j) {
        __m512 amax = _mm512_setzero_ps();
        for (int64_t c = 0; c < dk; c += 16) {
            const __mmask16 m = vec512::first_lanes(dk - c);
            const __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, k + j * ld + c), _mm512_maskz_loadu_ps(m, mean + c));
            amax = _mm512_max_ps(amax, _mm512_abs_ps(d));
        }
        const float mx = _mm512_reduce_max_ps(amax);
        const __m512 inv = _mm512_set1_ps(mx > 0.0f ? 127.0f / mx : 0.0f);
        for (int64_t c = 0; c < dk; c += 64) {
            // 64 channels (16 quads) into row, then down the quads' columns; channels past dk
            // are 0 (byte 128).
            for (int64_t g = 0; g < 4; ++g) {
                const __mmask16 m = vec512::first_lanes(dk - c - 16 * g);
                const __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, k + j * ld + c + 16 * g),
                                               _mm512_maskz_loadu_ps(m, mean + c + 16 * g));
                const __m512i u = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(d, inv)), _mm512_set1_epi32(128));
                _mm_store_si128(reinterpret_cast<__m128i*>(row + 4 * g), _mm512_cvtepi32_epi8(u));
            }
            const int64_t n = dk4 - c / 4 < 16 ? dk4 - c / 4 : 16;
            for (int64_t i = 0; i < n; ++i) keys[(c / 4 + i) * ldk + j] = row[i];
        }
        scale[j] = mx / 127.0f;
    }
    for (int64_t j = T; j < ldk; ++j) {
        for (int64_t c4 = 0; c4 < dk4; ++c4) keys[c4 * ldk + j] = 0x80808080u;
        scale[j] = 0.0f;
    }
}

void pack_head(const float* k, const float* v, int64_t ld, int64_t T, int64_t dk, uint32_t* keys, uint32_t* values) {
    pack_keys(k, ld, T, dk, keys);
    // Values: rows 2 j2 and 2 j2 + 1 interleaved lane by lane.
    const int64_t ldv = value_stride(dk);
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

// scores[r * ldk + col..col + 64) = row_scale[r] * key scale * (q_r · unsigned keys - row_corr[r])
// for r < R (q: signed int8 quads, rows dk4 words apart).
inline void score_tile(const int8_t* qp, int64_t dk4, const uint32_t* keys, int64_t ldk, const float* kscale,
                       const int32_t* row_corr, const float* row_scale, float* scores) {
    __m512i acc[R][4];
    PK_UNROLL
    for (int r = 0; r < R; ++r) {
        PK_UNROLL
        for (int i = 0; i < 4; ++i) acc[r][i] = _mm512_setzero_si512();
    }
    for (int64_t c4 = 0; c4 < dk4; ++c4, keys += ldk) {
        __m512i kv[4];
        PK_UNROLL
        for (int i = 0; i < 4; ++i) kv[i] = _mm512_loadu_si512(keys + 16 * i);
        PK_UNROLL
        for (int r = 0; r < R; ++r) {
            PK_UNROLL
            for (int i = 0; i < 4; ++i) acc[r][i] = matmul_detail::dpbusd_broadcast(acc[r][i], kv[i], qp + 4 * (r * dk4 + c4));
        }
    }
    PK_UNROLL
    for (int i = 0; i < 4; ++i) {
        const __m512 ks = _mm512_loadu_ps(kscale + 16 * i);
        PK_UNROLL
        for (int r = 0; r < R; ++r) {
            const __m512 s = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][i], _mm512_set1_epi32(row_corr[r])));
            _mm512_storeu_ps(scores + r * ldk + 16 * i, _mm512_mul_ps(_mm512_mul_ps(s, ks), _mm512_set1_ps(row_scale[r])));
        }
    }
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
    const int64_t dk4 = quads(dk), ldk = key_stride(T), ldv = value_stride(dk), T2 = pairs(T);
    const float* kscale = reinterpret_cast<const float*>(keys + dk4 * ldk);
    int8_t* qp = reinterpret_cast<int8_t*>(scratch);
    float* scores = scratch + R * dk4;
    uint32_t* w = reinterpret_cast<uint32_t*>(scores + R * ldk);  // R rows of ldk / 2 pairs
    for (int64_t r0 = 0; r0 < nr; r0 += R) {
        const int rows = nr - r0 < R ? static_cast<int>(nr - r0) : R;
        // The tile's queries as int8 quads with their scales and corrections (128 * their sum,
        // what the keys' + 128 adds); rows past nr are zero.
        float row_scale[R];
        int32_t row_corr[R];
        for (int r = 0; r < R; ++r) {
            const float* qr = q + (r0 + (r < rows ? r : 0)) * ldq;
            __m512 amax = _mm512_setzero_ps();
            for (int64_t c = 0; c < dk; c += 16)
                amax = _mm512_max_ps(amax, _mm512_abs_ps(_mm512_maskz_loadu_ps(r < rows ? vec512::first_lanes(dk - c) : 0, qr + c)));
            const float mx = _mm512_reduce_max_ps(amax);
            const __m512 inv = _mm512_set1_ps(mx > 0.0f ? 127.0f / mx : 0.0f);
            row_scale[r] = mx / 127.0f * scale;
            __m512i sum = _mm512_setzero_si512();
            for (int64_t c = 0; c < 4 * dk4; c += 16) {
                const __mmask16 m = r < rows ? vec512::first_lanes(dk - c) : 0;
                const __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, qr + c), inv));
                sum = _mm512_add_epi32(sum, v);
                _mm_mask_storeu_epi8(qp + 4 * (r * dk4) + c, vec512::first_lanes(4 * dk4 - c), _mm512_cvtepi32_epi8(v));
            }
            row_corr[r] = 128 * _mm512_reduce_add_epi32(sum);
        }
        for (int64_t col = 0; col < ldk; col += kKeyTile)
            score_tile(qp, dk4, keys + col, ldk, kscale + col, row_corr, row_scale, scores + col);
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
    t.attention.int8_bf16_pack_head = pack_head;
    t.attention.int8_bf16_attend_rows = attend_rows;
}

}  // namespace pk::kernels
