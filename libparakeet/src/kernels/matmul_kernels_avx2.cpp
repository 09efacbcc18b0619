// AVX2 + FMA + F16C micro-kernels of the matmul (the avx2 level of kernel_table.h, inherited by avx512).
//
// f32 (and F16, widened per panel slice by the driver): a 6 x 16 register tile, 12 ymm
// accumulators, two panel vectors and one broadcast per k, i.e. 12 FMAs for 8 loads.
//
// Q8_0: integer dot products with vpmaddwd on int16. The activations are stored as int16
// pairs, so one 32-bit broadcast of a pair times 8 outputs x 2 k gives 8 int32 partial sums;
// the weights of the K slice being reused are widened from int8 to int16 once per slice by
// the driver (widen_q8), which keeps vpmovsxbw out of the 4 x 16 tile's inner loop (measured
// ~15 % faster than widening in the loop). Per block of 32 the int32 sums are scaled by
// d_w * d_x into float accumulators. On Zen vpmaddwd does 16 multiply-adds at two per cycle,
// about 1.7x the FMA rate; the vpmaddubsw + vpsignb variant needs an extra instruction per
// product and measured slower.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/kernel_table.h"

namespace pk::kernels {
namespace {

using namespace matmul_detail;

constexpr int64_t MR = kRowsF32;
constexpr int64_t QR = kRowsQ8;

// Not std::min: a standard template instantiated here would be compiled with AVX2 enabled and
// could be the copy the linker keeps for the portable code too.
inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Writes one 16-wide output row: see MatmulKernels.
inline void store_row(float* c, __m256 a0, __m256 a1, const float* bias, bool accumulate) {
    if (accumulate) {
        a0 = _mm256_add_ps(_mm256_loadu_ps(c), a0);
        a1 = _mm256_add_ps(_mm256_loadu_ps(c + 8), a1);
    } else if (bias) {
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(bias));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(bias + 8));
    }
    _mm256_storeu_ps(c, a0);
    _mm256_storeu_ps(c + 8, a1);
}

// The output tile is read and written once per K slice; big outputs live in L3 or memory,
// so its lines are requested up front and arrive while the tile is being computed.
inline void prefetch_tile(const float* c, int64_t ldc, int64_t rows) {
    for (int64_t r = 0; r < rows; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kPanel - 1), _MM_HINT_T0);
    }
}

// f32 tile of R <= 6 rows (the tile of a partial last row panel computes only its rows, with
// the same instructions per element as the full tile).
template <int R>
void tile_f32_rows(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                   const float* bias, bool accumulate) {
    prefetch_tile(c, ldc, R);
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
#pragma GCC unroll 4
    for (int64_t k = 0; k < kc; ++k) {
        const __m256 b0 = _mm256_load_ps(b);
        const __m256 b1 = _mm256_load_ps(b + 8);
        __m256 ar = _mm256_broadcast_ss(a + 0);
        c00 = _mm256_fmadd_ps(ar, b0, c00);
        c01 = _mm256_fmadd_ps(ar, b1, c01);
        if constexpr (R > 1) {
            ar = _mm256_broadcast_ss(a + 1);
            c10 = _mm256_fmadd_ps(ar, b0, c10);
            c11 = _mm256_fmadd_ps(ar, b1, c11);
        }
        if constexpr (R > 2) {
            ar = _mm256_broadcast_ss(a + 2);
            c20 = _mm256_fmadd_ps(ar, b0, c20);
            c21 = _mm256_fmadd_ps(ar, b1, c21);
        }
        if constexpr (R > 3) {
            ar = _mm256_broadcast_ss(a + 3);
            c30 = _mm256_fmadd_ps(ar, b0, c30);
            c31 = _mm256_fmadd_ps(ar, b1, c31);
        }
        if constexpr (R > 4) {
            ar = _mm256_broadcast_ss(a + 4);
            c40 = _mm256_fmadd_ps(ar, b0, c40);
            c41 = _mm256_fmadd_ps(ar, b1, c41);
        }
        if constexpr (R > 5) {
            ar = _mm256_broadcast_ss(a + 5);
            c50 = _mm256_fmadd_ps(ar, b0, c50);
            c51 = _mm256_fmadd_ps(ar, b1, c51);
        }
        a += MR;
        b += kPanel;
    }
    store_row(c, c00, c01, bias, accumulate);
    if constexpr (R > 1) store_row(c + 1 * ldc, c10, c11, bias, accumulate);
    if constexpr (R > 2) store_row(c + 2 * ldc, c20, c21, bias, accumulate);
    if constexpr (R > 3) store_row(c + 3 * ldc, c30, c31, bias, accumulate);
    if constexpr (R > 4) store_row(c + 4 * ldc, c40, c41, bias, accumulate);
    if constexpr (R > 5) store_row(c + 5 * ldc, c50, c51, bias, accumulate);
}

void tile_f32(int64_t rows, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
              const float* bias, bool accumulate) {
    static_assert(MR == 6, "one instantiation per row count");
    switch (rows) {
        case 6: return tile_f32_rows<6>(kc, a, b, c, ldc, bias, accumulate);
        case 5: return tile_f32_rows<5>(kc, a, b, c, ldc, bias, accumulate);
        case 4: return tile_f32_rows<4>(kc, a, b, c, ldc, bias, accumulate);
        case 3: return tile_f32_rows<3>(kc, a, b, c, ldc, bias, accumulate);
        case 2: return tile_f32_rows<2>(kc, a, b, c, ldc, bias, accumulate);
        default: return tile_f32_rows<1>(kc, a, b, c, ldc, bias, accumulate);
    }
}

// One pair of int16 (32 bits) in every lane: vpbroadcastd from memory.
inline __m256i broadcast_pair(const int16_t* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
}

inline __m256i load_i16(const int16_t* p) {
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
}

inline __m256i load_widen(const uint8_t* p) {
    return _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
}

// acc += w_scale * x_scale * isum, for 8 outputs.
inline __m256 scale_add(__m256i isum, __m256 w_scale, __m256 x_scale, __m256 acc) {
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(w_scale, x_scale), acc);
}

// Q8_0 tile of R <= 4 rows (see tile_f32_rows).
template <int R>
void tile_q8_rows(int64_t nblocks, const int16_t* a, const float* a_scale, const uint8_t* b,
                  float* c, int64_t ldc, const float* bias, bool accumulate) {
    prefetch_tile(c, ldc, R);
    __m256 f00 = _mm256_setzero_ps(), f01 = _mm256_setzero_ps();
    __m256 f10 = _mm256_setzero_ps(), f11 = _mm256_setzero_ps();
    __m256 f20 = _mm256_setzero_ps(), f21 = _mm256_setzero_ps();
    __m256 f30 = _mm256_setzero_ps(), f31 = _mm256_setzero_ps();
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        __m256i i00 = _mm256_setzero_si256(), i01 = _mm256_setzero_si256();
        __m256i i10 = _mm256_setzero_si256(), i11 = _mm256_setzero_si256();
        __m256i i20 = _mm256_setzero_si256(), i21 = _mm256_setzero_si256();
        __m256i i30 = _mm256_setzero_si256(), i31 = _mm256_setzero_si256();
        const int16_t* q = reinterpret_cast<const int16_t*>(b + kPanel * sizeof(float));
#pragma GCC unroll 16
        for (int64_t t = 0; t < kQ8PairsPerBlock; ++t) {
            const __m256i w0 = load_i16(q + t * 2 * kPanel);
            const __m256i w1 = load_i16(q + t * 2 * kPanel + 16);
            const int16_t* at = a + 2 * t * QR;
            // Integer adds are associative, so GCC would otherwise regroup the sums into
            // trees of products and spill them; the empty asm pins the accumulators.
            __m256i xr = broadcast_pair(at + 0);
            i00 = _mm256_add_epi32(i00, _mm256_madd_epi16(w0, xr));
            i01 = _mm256_add_epi32(i01, _mm256_madd_epi16(w1, xr));
            __asm__("" : "+x"(i00), "+x"(i01));
            if constexpr (R > 1) {
                xr = broadcast_pair(at + 2);
                i10 = _mm256_add_epi32(i10, _mm256_madd_epi16(w0, xr));
                i11 = _mm256_add_epi32(i11, _mm256_madd_epi16(w1, xr));
                __asm__("" : "+x"(i10), "+x"(i11));
            }
            if constexpr (R > 2) {
                xr = broadcast_pair(at + 4);
                i20 = _mm256_add_epi32(i20, _mm256_madd_epi16(w0, xr));
                i21 = _mm256_add_epi32(i21, _mm256_madd_epi16(w1, xr));
                __asm__("" : "+x"(i20), "+x"(i21));
            }
            if constexpr (R > 3) {
                xr = broadcast_pair(at + 6);
                i30 = _mm256_add_epi32(i30, _mm256_madd_epi16(w0, xr));
                i31 = _mm256_add_epi32(i31, _mm256_madd_epi16(w1, xr));
                __asm__("" : "+x"(i30), "+x"(i31));
            }
        }
        const __m256 s0 = _mm256_load_ps(reinterpret_cast<const float*>(b));
        const __m256 s1 = _mm256_load_ps(reinterpret_cast<const float*>(b) + 8);
        __m256 xs = _mm256_broadcast_ss(a_scale + 0);
        f00 = scale_add(i00, s0, xs, f00);
        f01 = scale_add(i01, s1, xs, f01);
        if constexpr (R > 1) {
            xs = _mm256_broadcast_ss(a_scale + 1);
            f10 = scale_add(i10, s0, xs, f10);
            f11 = scale_add(i11, s1, xs, f11);
        }
        if constexpr (R > 2) {
            xs = _mm256_broadcast_ss(a_scale + 2);
            f20 = scale_add(i20, s0, xs, f20);
            f21 = scale_add(i21, s1, xs, f21);
        }
        if constexpr (R > 3) {
            xs = _mm256_broadcast_ss(a_scale + 3);
            f30 = scale_add(i30, s0, xs, f30);
            f31 = scale_add(i31, s1, xs, f31);
        }
        a += 2 * kQ8PairsPerBlock * QR;
        a_scale += QR;
        b += kQ8WideBlockBytes;
    }
    store_row(c, f00, f01, bias, accumulate);
    if constexpr (R > 1) store_row(c + 1 * ldc, f10, f11, bias, accumulate);
    if constexpr (R > 2) store_row(c + 2 * ldc, f20, f21, bias, accumulate);
    if constexpr (R > 3) store_row(c + 3 * ldc, f30, f31, bias, accumulate);
}

void tile_q8(int64_t rows, int64_t nblocks, const int16_t* a, const float* a_scale,
             const uint8_t* b, float* c, int64_t ldc, const float* bias, bool accumulate) {
    static_assert(QR == 4, "one instantiation per row count");
    switch (rows) {
        case 4: return tile_q8_rows<4>(nblocks, a, a_scale, b, c, ldc, bias, accumulate);
        case 3: return tile_q8_rows<3>(nblocks, a, a_scale, b, c, ldc, bias, accumulate);
        case 2: return tile_q8_rows<2>(nblocks, a, a_scale, b, c, ldc, bias, accumulate);
        default: return tile_q8_rows<1>(nblocks, a, a_scale, b, c, ldc, bias, accumulate);
    }
}

void widen_q8(const uint8_t* blocks, int64_t nblocks, uint8_t* wide) {
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        std::memcpy(wide, blocks, kPanel * sizeof(float));
        const uint8_t* q = blocks + kPanel * sizeof(float);
        __m256i* w = reinterpret_cast<__m256i*>(wide + kPanel * sizeof(float));
        for (int64_t i = 0; i < kPanel * kQ8Block / 16; ++i) {
            _mm256_store_si256(w + i, load_widen(q + 16 * i));
        }
        blocks += kQ8PanelBlockBytes;
        wide += kQ8WideBlockBytes;
    }
}

void f16_to_f32_n(const uint16_t* src, int64_t n, float* dst) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    if (i < n) {
        alignas(16) uint16_t h[8] = {};
        alignas(32) float f[8];
        std::memcpy(h, src + i, static_cast<size_t>(n - i) * sizeof(uint16_t));
        _mm256_store_ps(f, _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h))));
        std::memcpy(dst + i, f, static_cast<size_t>(n - i) * sizeof(float));
    }
}

// Largest lane of each of m[0..8), as one vector (lane j = max of m[j]).
inline __m256 lane_max8(const __m256 m[8]) {
    __m256 h[4];
    for (int i = 0; i < 4; ++i) {  // per 128-bit half: [max pairs of m[2i] | of m[2i+1]]
        h[i] = _mm256_max_ps(_mm256_shuffle_ps(m[2 * i], m[2 * i + 1], 0x88),
                             _mm256_shuffle_ps(m[2 * i], m[2 * i + 1], 0xDD));
    }
    const __m256 q0 = _mm256_max_ps(_mm256_shuffle_ps(h[0], h[1], 0x88),
                                    _mm256_shuffle_ps(h[0], h[1], 0xDD));  // m0..m3 per half
    const __m256 q1 = _mm256_max_ps(_mm256_shuffle_ps(h[2], h[3], 0x88),
                                    _mm256_shuffle_ps(h[2], h[3], 0xDD));  // m4..m7 per half
    return _mm256_max_ps(_mm256_permute2f128_ps(q0, q1, 0x20),
                         _mm256_permute2f128_ps(q0, q1, 0x31));
}

// Quantises nb <= 8 consecutive blocks of one row: q[32 nb] in row order (= pairs in order),
// d[nb] the scales. The 8 blocks share one vector division for d = amax / 127 and one for
// id = 127 / amax (scalar divisions were a fifth of the quantisation time); the results are
// the same IEEE quotients as q8_scale's.
void quantize_blocks8(const float* x, int64_t nb, int16_t* q, float* d) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 m[8];
    for (int64_t j = 0; j < 8; ++j) {
        m[j] = _mm256_setzero_ps();
        if (j >= nb) continue;
        for (int i = 0; i < 4; ++i) {
            m[j] = _mm256_max_ps(m[j], _mm256_andnot_ps(sign, _mm256_loadu_ps(x + 32 * j + 8 * i)));
        }
    }
    const __m256 amax = lane_max8(m);
    const __m256 c127 = _mm256_set1_ps(127.0f);
    const __m256 positive = _mm256_cmp_ps(amax, _mm256_setzero_ps(), _CMP_GT_OQ);
    const __m256 id = _mm256_and_ps(positive, _mm256_div_ps(c127, amax));
    alignas(32) float dv[8];
    _mm256_store_ps(dv, _mm256_div_ps(amax, c127));
    const __m256 lo_clamp = _mm256_set1_ps(-127.0f);
    for (int64_t j = 0; j < nb; ++j) {
        d[j] = dv[j];
        const __m256 idj = _mm256_permutevar8x32_ps(id, _mm256_set1_epi32(static_cast<int>(j)));
        __m256i r[4];
        for (int i = 0; i < 4; ++i) {
            const __m256 t = _mm256_mul_ps(_mm256_loadu_ps(x + 32 * j + 8 * i), idj);
            r[i] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(t, lo_clamp), c127));
        }
        // packs works per 128-bit lane; the permute puts the 16 values back in order.
        __m256i* out = reinterpret_cast<__m256i*>(q + 32 * j);
        const __m256i p0 = _mm256_packs_epi32(r[0], r[1]), p1 = _mm256_packs_epi32(r[2], r[3]);
        _mm256_storeu_si256(out, _mm256_permute4x64_epi64(p0, 0xD8));
        _mm256_storeu_si256(out + 1, _mm256_permute4x64_epi64(p1, 0xD8));
    }
}

void quantize_row_q8(const float* x, int64_t K, int16_t* q, float* scale) {
    const int64_t nblocks = K / kQ8Block;
    for (int64_t b = 0; b < nblocks; b += 8) {
        quantize_blocks8(x + b * kQ8Block, min64(8, nblocks - b), q + b * kQ8Block,
                         scale + b);
    }
}

// Interleaves the pairs of 4 rows (p[r] = 8 consecutive pairs of row r) into the panel order
// pair-major, row-minor: a 4 x 4 transpose of 32-bit lanes in each half, then the halves.
inline void store_interleaved(const __m256i p[4], int16_t* q) {
    const __m256i u0 = _mm256_unpacklo_epi32(p[0], p[1]);  // t0r0 t0r1 t1r0 t1r1 | t4.. t5..
    const __m256i u1 = _mm256_unpacklo_epi32(p[2], p[3]);  // t0r2 t0r3 t1r2 t1r3 | ...
    const __m256i u2 = _mm256_unpackhi_epi32(p[0], p[1]);  // t2r0 t2r1 t3r0 t3r1 | t6.. t7..
    const __m256i u3 = _mm256_unpackhi_epi32(p[2], p[3]);
    const __m256i v0 = _mm256_unpacklo_epi64(u0, u1);  // t0 | t4
    const __m256i v1 = _mm256_unpackhi_epi64(u0, u1);  // t1 | t5
    const __m256i v2 = _mm256_unpacklo_epi64(u2, u3);  // t2 | t6
    const __m256i v3 = _mm256_unpackhi_epi64(u2, u3);  // t3 | t7
    __m256i* out = reinterpret_cast<__m256i*>(q);
    _mm256_storeu_si256(out + 0, _mm256_permute2x128_si256(v0, v1, 0x20));  // t0 t1
    _mm256_storeu_si256(out + 1, _mm256_permute2x128_si256(v2, v3, 0x20));  // t2 t3
    _mm256_storeu_si256(out + 2, _mm256_permute2x128_si256(v0, v1, 0x31));  // t4 t5
    _mm256_storeu_si256(out + 3, _mm256_permute2x128_si256(v2, v3, 0x31));  // t6 t7
}

void quantize_panel_q8(const float* x, int64_t rows, int64_t ldx, int64_t nblocks, int16_t* q,
                       float* scale) {
    static_assert(QR == 4, "store_interleaved transposes 4 rows");
    // Quantise up to 8 blocks of each row in row order, then interleave block by block.
    alignas(32) int16_t rq[QR][8 * kQ8Block];
    float rd[QR][8];
    for (int64_t b0 = 0; b0 < nblocks; b0 += 8) {
        const int64_t nb = min64(8, nblocks - b0);
        for (int64_t r = 0; r < QR; ++r) {
            if (r < rows) {
                quantize_blocks8(x + r * ldx + b0 * kQ8Block, nb, rq[r], rd[r]);
            } else {
                std::memset(rq[r], 0, sizeof rq[r]);
                std::memset(rd[r], 0, sizeof rd[r]);
            }
        }
        for (int64_t j = 0; j < nb; ++j) {
            __m256i lo[QR], hi[QR];
            for (int64_t r = 0; r < QR; ++r) {
                lo[r] = _mm256_load_si256(reinterpret_cast<const __m256i*>(rq[r] + 32 * j));
                hi[r] = _mm256_load_si256(reinterpret_cast<const __m256i*>(rq[r] + 32 * j + 16));
                scale[(b0 + j) * QR + r] = rd[r][j];
            }
            int16_t* qb = q + 2 * (b0 + j) * kQ8PairsPerBlock * QR;
            store_interleaved(lo, qb);
            store_interleaved(hi, qb + 2 * 8 * QR);
        }
    }
}

// The matrix-vector products are memory bound: four independent k streams keep enough
// loads in flight; they are summed in a fixed order at the end.
void matvec_f32(const float* x, int64_t K, const float* panel, float* out) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    __m256 a4 = _mm256_setzero_ps(), a5 = _mm256_setzero_ps();
    __m256 a6 = _mm256_setzero_ps(), a7 = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
        const float* p = panel + k * kPanel;
        __m256 xk = _mm256_broadcast_ss(x + k);
        a0 = _mm256_fmadd_ps(xk, _mm256_load_ps(p), a0);
        a1 = _mm256_fmadd_ps(xk, _mm256_load_ps(p + 8), a1);
        xk = _mm256_broadcast_ss(x + k + 1);
        a2 = _mm256_fmadd_ps(xk, _mm256_load_ps(p + 16), a2);
        a3 = _mm256_fmadd_ps(xk, _mm256_load_ps(p + 24), a3);
        xk = _mm256_broadcast_ss(x + k + 2);
        a4 = _mm256_fmadd_ps(xk, _mm256_load_ps(p + 32), a4);
        a5 = _mm256_fmadd_ps(xk, _mm256_load_ps(p + 40), a5);
        xk = _mm256_broadcast_ss(x + k + 3);
        a6 = _mm256_fmadd_ps(xk, _mm256_load_ps(p + 48), a6);
        a7 = _mm256_fmadd_ps(xk, _mm256_load_ps(p + 56), a7);
    }
    for (; k < K; ++k) {
        const float* p = panel + k * kPanel;
        const __m256 xk = _mm256_broadcast_ss(x + k);
        a0 = _mm256_fmadd_ps(xk, _mm256_load_ps(p), a0);
        a1 = _mm256_fmadd_ps(xk, _mm256_load_ps(p + 8), a1);
    }
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a4, a6)));
    _mm256_storeu_ps(out + 8, _mm256_add_ps(_mm256_add_ps(a1, a3), _mm256_add_ps(a5, a7)));
}

inline __m256 load_half8(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(p)));
}

void matvec_f16(const float* x, int64_t K, const uint16_t* panel, float* out) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    __m256 a4 = _mm256_setzero_ps(), a5 = _mm256_setzero_ps();
    __m256 a6 = _mm256_setzero_ps(), a7 = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
        const uint16_t* p = panel + k * kPanel;
        __m256 xk = _mm256_broadcast_ss(x + k);
        a0 = _mm256_fmadd_ps(xk, load_half8(p), a0);
        a1 = _mm256_fmadd_ps(xk, load_half8(p + 8), a1);
        xk = _mm256_broadcast_ss(x + k + 1);
        a2 = _mm256_fmadd_ps(xk, load_half8(p + 16), a2);
        a3 = _mm256_fmadd_ps(xk, load_half8(p + 24), a3);
        xk = _mm256_broadcast_ss(x + k + 2);
        a4 = _mm256_fmadd_ps(xk, load_half8(p + 32), a4);
        a5 = _mm256_fmadd_ps(xk, load_half8(p + 40), a5);
        xk = _mm256_broadcast_ss(x + k + 3);
        a6 = _mm256_fmadd_ps(xk, load_half8(p + 48), a6);
        a7 = _mm256_fmadd_ps(xk, load_half8(p + 56), a7);
    }
    for (; k < K; ++k) {
        const uint16_t* p = panel + k * kPanel;
        const __m256 xk = _mm256_broadcast_ss(x + k);
        a0 = _mm256_fmadd_ps(xk, load_half8(p), a0);
        a1 = _mm256_fmadd_ps(xk, load_half8(p + 8), a1);
    }
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a4, a6)));
    _mm256_storeu_ps(out + 8, _mm256_add_ps(_mm256_add_ps(a1, a3), _mm256_add_ps(a5, a7)));
}

void matvec_q8(const int16_t* xq, const float* x_scale, int64_t nblocks, const uint8_t* panel,
               float* out) {
    __m256 f0 = _mm256_setzero_ps(), f1 = _mm256_setzero_ps();
    for (int64_t blk = 0; blk < nblocks; ++blk) {
        const uint8_t* q = panel + kPanel * sizeof(float);
        __m256i i0 = _mm256_setzero_si256(), i1 = _mm256_setzero_si256();
        __m256i j0 = _mm256_setzero_si256(), j1 = _mm256_setzero_si256();
        for (int64_t t = 0; t < kQ8PairsPerBlock; t += 2) {
            __m256i xr = broadcast_pair(xq + 2 * t);
            i0 = _mm256_add_epi32(i0, _mm256_madd_epi16(load_widen(q + t * 32), xr));
            i1 = _mm256_add_epi32(i1, _mm256_madd_epi16(load_widen(q + t * 32 + 16), xr));
            xr = broadcast_pair(xq + 2 * t + 2);
            j0 = _mm256_add_epi32(j0, _mm256_madd_epi16(load_widen(q + t * 32 + 32), xr));
            j1 = _mm256_add_epi32(j1, _mm256_madd_epi16(load_widen(q + t * 32 + 48), xr));
        }
        const __m256 xs = _mm256_broadcast_ss(x_scale + blk);
        const float* ws = reinterpret_cast<const float*>(panel);
        f0 = scale_add(_mm256_add_epi32(i0, j0), _mm256_load_ps(ws), xs, f0);
        f1 = scale_add(_mm256_add_epi32(i1, j1), _mm256_load_ps(ws + 8), xs, f1);
        xq += 2 * kQ8PairsPerBlock;
        panel += kQ8PanelBlockBytes;
    }
    _mm256_storeu_ps(out, f0);
    _mm256_storeu_ps(out + 8, f1);
}

}  // namespace

// Keeps the portable activation packer (pack_rows_f32).
void add_matmul_kernels_avx2(KernelTable& t) {
    MatmulKernels& m = t.matmul;
    m.tile_f32 = tile_f32;
    m.tile_q8 = tile_q8;
    m.widen_q8 = widen_q8;
    m.f16_to_f32 = f16_to_f32_n;
    m.quantize_row_q8 = quantize_row_q8;
    m.quantize_panel_q8 = quantize_panel_q8;
    m.matvec_f32 = matvec_f32;
    m.matvec_f16 = matvec_f16;
    m.matvec_q8 = matvec_q8;
}

}  // namespace pk::kernels
