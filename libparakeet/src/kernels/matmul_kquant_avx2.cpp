// The unsigned-form tile with AVX2: vpmaddubsw multiplies pairs of unsigned weights by signed
// activations (|u q| <= 63 * 127, so a pair never saturates int16), a few of those are summed
// in int16, and vpmaddwd widens them. The integer sums are exact, and the float operations are
// the portable tile's, in the same order, so the bits are the same.
#include <immintrin.h>

#include "kernels/kernel_table.h"
#include "quant/ggml_blocks.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

// The integer sums of `rows` rows over quads [t0, t0 + n) of one unit for outputs
// [8 g, 8 g + 8): vpmaddubsw products summed in int16 first (exact: at most 2 n products of
// u * q per lane, which the caller keeps below 2^15), then widened once by vpmaddwd.
template <int kRows, int kQuads>
inline void quad_sums(const uint8_t* u, const int32_t (*quad)[kQ8QuadsPerBlock], int64_t g, int64_t t0,
                      __m256i* isum) {
    __m256i s16[kRows];
    for (int r = 0; r < kRows; ++r) s16[r] = _mm256_setzero_si256();
    for (int64_t t = t0; t < t0 + kQuads; ++t) {
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u + 64 * t + 32 * g));
        for (int r = 0; r < kRows; ++r) {
            s16[r] = _mm256_add_epi16(s16[r], _mm256_maddubs_epi16(w, _mm256_set1_epi32(quad[r][t])));
        }
    }
    const __m256i ones = _mm256_set1_epi16(1);
    for (int r = 0; r < kRows; ++r) isum[r] = _mm256_madd_epi16(s16[r], ones);
}

// One 8-output half (g) of the tile over all units: the four rows' accumulators stay in
// registers. Halves (Q6_K, u < 64): groups of 16 k, int16 sums over 2 quads at a time
// (4 * 63 * 127 < 2^15); otherwise u < 32 and groups of 32 k, int16 sums over 4 quads.
template <bool kHalves, int kRows>
void tile_half(int64_t nunits, int64_t g, const int8_t* a, const float* a_scale, const float* a_corr,
               const uint8_t* units, __m256* acc) {
    for (int64_t b = 0; b < nunits; ++b) {
        const uint8_t* unit = units + static_cast<size_t>(b) * kKqUnitBytes;
        const auto* so = reinterpret_cast<const float*>(unit);
        const uint8_t* u = unit + 4 * kPanel * sizeof(float);
        int32_t quad[kRowsKq][kQ8QuadsPerBlock];
        __builtin_memcpy(quad, a + b * kRowsKq * kQ8Block, sizeof quad);
        __m256i isum[kRows], more[kRows];  // more: the first half's sums, or a second pair of quads
        for (int64_t h = 0; h < 2; ++h) {
            if (kHalves) {
                quad_sums<kRows, 2>(u, quad, g, 4 * h, isum);
                quad_sums<kRows, 2>(u, quad, g, 4 * h + 2, more);
                for (int r = 0; r < kRows; ++r) isum[r] = _mm256_add_epi32(isum[r], more[r]);
            } else {
                quad_sums<kRows, 4>(u, quad, g, 4 * h, isum);
            }
            if (!kHalves && h == 0) {
                for (int r = 0; r < kRows; ++r) more[r] = isum[r];
                continue;
            }
            const __m256 sh = _mm256_loadu_ps(so + h * kPanel + 8 * g);
            const __m256 oh = _mm256_loadu_ps(so + (2 + h) * kPanel + 8 * g);
            for (int r = 0; r < kRows; ++r) {
                const int64_t row = b * kRowsKq + r;
                const __m256 dx = _mm256_set1_ps(a_scale[row]);
                const float* corr = a_corr + row * kKqCorrPerBlock;
                const __m256i total = kHalves ? isum[r] : _mm256_add_epi32(more[r], isum[r]);
                acc[r] = _mm256_fmadd_ps(_mm256_mul_ps(sh, _mm256_cvtepi32_ps(total)), dx, acc[r]);
                acc[r] = _mm256_fnmadd_ps(oh, _mm256_set1_ps(corr[kHalves ? h : 2]), acc[r]);
            }
        }
    }
}

template <bool kHalves, int kRows>
void tile_kq_avx2(int64_t nunits, const int8_t* a, const float* a_scale, const float* a_corr,
                  const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    for (int64_t g = 0; g < 2; ++g) {
        __m256 acc[kRows];
        for (auto& v : acc) v = _mm256_setzero_ps();
        tile_half<kHalves, kRows>(nunits, g, a, a_scale, a_corr, units, acc);
        for (int r = 0; r < kRows; ++r) {
            float* cr = c + r * ldc + 8 * g;
            __m256 v = acc[r];
            if (accumulate) {
                v = _mm256_add_ps(_mm256_loadu_ps(cr), v);
            } else if (bias) {
                v = _mm256_add_ps(v, _mm256_loadu_ps(bias + 8 * g));
            }
            _mm256_storeu_ps(cr, v);
        }
    }
}

// ---- Decoding (decode_kq_units of matmul_kquant.cpp, the same units).

inline __m256i shift_right16(__m256i x, int n) { return _mm256_srl_epi16(x, _mm_cvtsi32_si128(n)); }

// The 32 values of a 32-block's 16 bytes of nibbles: low nibbles first, then high.
inline __m256i nibbles32(const uint8_t* qs) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m128i low4 = _mm_set1_epi8(0x0F);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(x, 4), low4), _mm_and_si128(x, low4));
}

// Bit j of the u32 at qh as 0x10 in byte j.
inline __m256i high_bits32(const uint8_t* qh_bytes) {
    uint32_t qh;
    __builtin_memcpy(&qh, qh_bytes, sizeof qh);
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(static_cast<int>(qh)),
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

// The integers u of values [32 v, 32 v + 32) of one block (quant::unsigned_unit's u).
inline __m256i unit_u(WeightType type, const uint8_t* block, int v) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    auto load = [](const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
    switch (type) {
        case WeightType::Q4_0: return nibbles32(block + 2);
        case WeightType::Q4_1: return nibbles32(block + 4);
        case WeightType::Q5_0: return _mm256_or_si256(nibbles32(block + 6), high_bits32(block + 2));
        case WeightType::Q5_1: return _mm256_or_si256(nibbles32(block + 8), high_bits32(block + 4));
        case WeightType::Q4_K: return _mm256_and_si256(shift_right16(load(block + 16 + 32 * (v / 2)), 4 * (v % 2)), low4);
        case WeightType::Q5_K: {
            const __m256i n = _mm256_and_si256(shift_right16(load(block + 48 + 32 * (v / 2)), 4 * (v % 2)), low4);
            const __m256i hb = _mm256_and_si256(shift_right16(load(block + 16), v), _mm256_set1_epi8(1));
            return _mm256_or_si256(n, _mm256_slli_epi16(hb, 4));
        }
        case WeightType::Q6_K: {
            const int h = v / 4, q = v % 4;
            const __m256i n = _mm256_and_si256(shift_right16(load(block + 64 * h + 32 * (q % 2)), 4 * (q / 2)), low4);
            const __m256i hb = _mm256_and_si256(shift_right16(load(block + 128 + 32 * h), 2 * q), _mm256_set1_epi8(3));
            return _mm256_or_si256(n, _mm256_slli_epi16(hb, 4));
        }
        default: return _mm256_setzero_si256();  // not an unsigned-form type: never asked for
    }
}

// r[j] = the 8 dwords of row j -> r[t] = dword t of rows 0..7.
inline void transpose8x8(__m256i* r) {
    __m256i t[8], u[8];
    for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; ++i) {
        u[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int i = 0; i < 4; ++i) {
        r[i] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x20);
        r[i + 4] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x31);
    }
}

// Eight rows at a time: each row's 32 u in a register, transposed into the quads of the unit.
void decode_kq_units(WeightType type, const uint8_t* panel, int64_t u0, int64_t n, uint8_t* units) {
    const auto gtype = static_cast<GgmlType>(type);
    const int64_t units_per_block = quant::block_values(gtype) / kQ8Block;
    const size_t block_bytes = quant::block_bytes(gtype);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t unit = u0 + i, column = unit / units_per_block;
        const int v = static_cast<int>(unit % units_per_block);
        uint8_t* out = units + static_cast<size_t>(i) * kKqUnitBytes;
        auto* s = reinterpret_cast<float*>(out);
        float* o = s + 2 * kPanel;
        uint8_t* quads = out + 4 * kPanel * sizeof(float);
        for (int64_t g = 0; g < 2; ++g) {
            __m256i rows[8];
            for (int64_t jj = 0; jj < 8; ++jj) {
                const int64_t j = 8 * g + jj;
                const uint8_t* block = panel + (column * kPanel + j) * block_bytes;
                rows[jj] = unit_u(type, block, v);
                float sc[2], off[2];
                quant::unsigned_unit_scales(gtype, block, v, sc, off);
                s[j] = sc[0];
                s[kPanel + j] = sc[1];
                o[j] = off[0];
                o[kPanel + j] = off[1];
            }
            transpose8x8(rows);
            for (int64_t t = 0; t < kQ8QuadsPerBlock; ++t) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(quads + 64 * t + 32 * g), rows[t]);
            }
        }
    }
}

// quantize_kq (matmul_kquant.cpp) with AVX2: the same scale (q8_scale), the same rounding
// (cvtps2dq rounds to nearest even, as nearbyint does), the same exact sums.
void quantize_kq(const float* x, int64_t rows, int64_t ldx, int64_t nblocks, int64_t mr, int8_t* q, float* scale,
                 float* corr) {
    const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    for (int64_t b = 0; b < nblocks; ++b) {
        for (int64_t r = 0; r < mr; ++r) {
            int8_t* qb = q + (b * mr + r) * kQ8Block;
            float* cb = corr + (b * mr + r) * kKqCorrPerBlock;
            if (r >= rows) {
                __builtin_memset(qb, 0, kQ8Block);
                scale[b * mr + r] = 0.0f;
                cb[0] = cb[1] = cb[2] = 0.0f;
                continue;
            }
            const float* xb = x + r * ldx + b * kQ8Block;
            __m256 v[4];
            __m256 m = _mm256_setzero_ps();
            for (int i = 0; i < 4; ++i) {
                v[i] = _mm256_loadu_ps(xb + 8 * i);
                m = _mm256_max_ps(m, _mm256_and_ps(v[i], abs_mask));
            }
            __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
            m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
            m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
            const Q8Scale s = q8_scale(_mm_cvtss_f32(m4));
            const __m256 id = _mm256_set1_ps(s.id);
            __m256i qi[4];
            for (int i = 0; i < 4; ++i) {
                qi[i] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(v[i], id), lo), hi));
            }
            // int32 -> int8 in order: packs interleave 128-bit lanes, the permute puts them back.
            const __m256i p16a = _mm256_packs_epi32(qi[0], qi[1]), p16b = _mm256_packs_epi32(qi[2], qi[3]);
            const __m256i p8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p16a, p16b),
                                                           _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(qb), p8);
            const __m256i s01 = _mm256_add_epi32(qi[0], qi[1]), s23 = _mm256_add_epi32(qi[2], qi[3]);
            int32_t lanes[16];
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), s01);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes + 8), s23);
            int32_t sum0 = 0, sum1 = 0;
            for (int i = 0; i < 8; ++i) {
                sum0 += lanes[i];
                sum1 += lanes[8 + i];
            }
            scale[b * mr + r] = s.d;
            cb[0] = s.d * static_cast<float>(sum0);
            cb[1] = s.d * static_cast<float>(sum1);
            cb[2] = s.d * static_cast<float>(sum0 + sum1);
        }
    }
}

void tile_kq(int64_t rows, int64_t nunits, bool halves, const int8_t* a, const float* a_scale, const float* a_corr,
             const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    // Row counts as template arguments, so that the rows' accumulators stay in registers.
    using Tile = void (*)(int64_t, const int8_t*, const float*, const float*, const uint8_t*, float*, int64_t,
                          const float*, bool);
    static constexpr Tile kTiles[2][kRowsKq] = {
        {tile_kq_avx2<false, 1>, tile_kq_avx2<false, 2>, tile_kq_avx2<false, 3>, tile_kq_avx2<false, 4>},
        {tile_kq_avx2<true, 1>, tile_kq_avx2<true, 2>, tile_kq_avx2<true, 3>, tile_kq_avx2<true, 4>}};
    kTiles[halves][rows - 1](nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
}

}  // namespace

void add_matmul_kquant_avx2(KernelTable& t) {
    t.matmul.tile_kq = tile_kq;
    t.matmul.quantize_kq = quantize_kq;
    t.matmul.decode_kq_units = decode_kq_units;
}

}  // namespace pk::kernels
