// AVX-512 real FFT: fft.cpp's transform with its butterflies and split step done 4 to 16 bins
// at a time. Every value is computed by the operations fft.cpp uses, in the same order, each
// product rounded before it is added (no fused multiply-adds: this file is compiled with
// fp-contract=fast, so the arithmetic goes through the explicitly rounded intrinsics below).
// The spectrum is therefore bitwise the portable one, and the log-mel features do not depend
// on the level.
#include <immintrin.h>

#include "kernels/fft_steps.h"
#include "kernels/kernel_table.h"

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -W(maybe-)uninitialized
// reports at -O3 (a known false positive of the compiler's headers).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace pk::kernels {
namespace {

constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

__m512 add(__m512 a, __m512 b) { return _mm512_add_round_ps(a, b, kRound); }
__m512 sub(__m512 a, __m512 b) { return _mm512_sub_round_ps(a, b, kRound); }
__m512 mul(__m512 a, __m512 b) { return _mm512_mul_round_ps(a, b, kRound); }

// b * w for 8 interleaved complex numbers: (br wr - bi wi, br wi + bi wr), as fft.cpp rounds it.
__m512 cmul(__m512 b, __m512 w) {
    const __m512 p = mul(b, _mm512_moveldup_ps(w));                                      // br wr, bi wr
    const __m512 q = mul(_mm512_permute_ps(b, _MM_SHUFFLE(2, 3, 0, 1)), _mm512_movehdup_ps(w));  // bi wi, br wi
    return _mm512_mask_add_round_ps(sub(p, q), 0xAAAA, p, q, kRound);
}

// a + t, and a - t in the lanes of `minus`.
__m512 butterfly(__m512 a, __m512 t, __mmask16 minus) {
    return _mm512_mask_sub_round_ps(add(a, t), minus, a, t, kRound);
}

// The radix-2 stages on m complex numbers (m >= 32). A vector holds 8 of them: four butterflies
// of stage 1, two groups of stage 2, one group of stage 4, then half a group's a or b side.
void complex_fft_in_place(const RealFftTables& t, float* z) {
    const int m = t.n / 2;
    for (int s = 0; s < m; s += 8) {  // h = 1: [a b] per 128 bits, no twiddle
        const __m512 x = _mm512_loadu_ps(z + 2 * s);
        const __m512 a = _mm512_permute_ps(x, _MM_SHUFFLE(1, 0, 1, 0));
        const __m512 b = _mm512_permute_ps(x, _MM_SHUFFLE(3, 2, 3, 2));
        _mm512_storeu_ps(z + 2 * s, butterfly(a, b, 0xCCCC));
    }
    const __m512 w2 = _mm512_broadcast_f32x4(_mm_loadu_ps(t.stage_tw + 2));  // h = 2: [w0 w1] x 4
    for (int s = 0; s < m; s += 8) {  // h = 2: [a0 a1 | b0 b1] per 256 bits
        const __m512 x = _mm512_loadu_ps(z + 2 * s);
        const __m512 a = _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(2, 2, 0, 0));
        const __m512 b = _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(3, 3, 1, 1));
        _mm512_storeu_ps(z + 2 * s, butterfly(a, cmul(b, w2), 0xF0F0));
    }
    const __m512 w = _mm512_maskz_loadu_ps(0x00FF, t.stage_tw + 6);
    const __m512 w4 = _mm512_shuffle_f32x4(w, w, _MM_SHUFFLE(1, 0, 1, 0));  // h = 4: [w0..w3] x 2
    for (int s = 0; s < m; s += 8) {  // h = 4: [a0..a3 | b0..b3]
        const __m512 x = _mm512_loadu_ps(z + 2 * s);
        const __m512 a = _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(1, 0, 1, 0));
        const __m512 b = _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(3, 2, 3, 2));
        _mm512_storeu_ps(z + 2 * s, butterfly(a, cmul(b, w4), 0xFF00));
    }
    for (int h = 8; h < m; h *= 2) {
        const float* w = t.stage_tw + 2 * (h - 1);
        for (int s = 0; s < m; s += 2 * h) {
            float* a = z + 2 * s;
            float* b = a + 2 * h;
            for (int j = 0; j < h; j += 8) {
                const __m512 av = _mm512_loadu_ps(a + 2 * j);
                const __m512 tv = cmul(_mm512_loadu_ps(b + 2 * j), _mm512_loadu_ps(w + 2 * j));
                _mm512_storeu_ps(a + 2 * j, add(av, tv));
                _mm512_storeu_ps(b + 2 * j, sub(av, tv));
            }
        }
    }
}

// The permutations below (vpermt2ps indices) take 32 floats, two vectors, to 16 and back:
// the real or imaginary parts of 16 interleaved complex numbers, in order or reversed.
__m512 pick(const float* p, __m512i idx) {
    return _mm512_permutex2var_ps(_mm512_loadu_ps(p), idx, _mm512_loadu_ps(p + 16));
}

void put(float* p, __m512 re, __m512 im, __m512i first, __m512i second) {
    _mm512_storeu_ps(p, _mm512_permutex2var_ps(re, first, im));
    _mm512_storeu_ps(p + 16, _mm512_permutex2var_ps(re, second, im));
}

// fft.cpp's split step for bins k0 .. k0 + 15 and m - k0 - 15 .. m - k0, 16 lanes each: the
// bins k in order, their partners m - k read and written reversed. The partners are written
// last, as fft.cpp writes them, which decides bin m/2 (its own partner).
void split_block(const RealFftTables& t, int k0, float* out) {
    const int m = t.n / 2;
    float* zk = out + 2 * k0;
    float* zc = out + 2 * (m - k0 - 15);
    const __m512i re = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i im = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512i re_reversed = _mm512_setr_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i im_reversed = _mm512_setr_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512 zr = pick(zk, re), zi = pick(zk, im);
    const __m512 cr = pick(zc, re_reversed), ci = pick(zc, im_reversed);
    const __m512 half = _mm512_set1_ps(0.5f), minus_half = _mm512_set1_ps(-0.5f);
    const __m512 er = mul(half, add(zr, cr)), ei = mul(half, sub(zi, ci));
    const __m512 orr = mul(half, add(zi, ci)), oi = mul(minus_half, sub(zr, cr));
    const __m512 wr = pick(t.split_tw + 2 * k0, re), wi = pick(t.split_tw + 2 * k0, im);
    const __m512 tr = sub(mul(wr, orr), mul(wi, oi));
    const __m512 ti = add(mul(wr, oi), mul(wi, orr));
    put(zk, add(er, tr), add(ei, ti), _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
        _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
    put(zc, sub(er, tr), sub(ti, ei), _mm512_setr_epi32(15, 31, 14, 30, 13, 29, 12, 28, 11, 27, 10, 26, 9, 25, 8, 24),
        _mm512_setr_epi32(7, 23, 6, 22, 5, 21, 4, 20, 3, 19, 2, 18, 1, 17, 0, 16));
}

void real_forward(const RealFftTables& t, const float* in, float* out) {
    const int m = t.n / 2;
    if (m < 32) {  // the split step's blocks are 16 of the m/2 bins: below that, the portable code
        real_fft_portable(t, in, out);
        return;
    }
    fft_pack_bit_reversed(t, in, out);
    complex_fft_in_place(t, out);
    fft_split_ends(t, out);
    for (int k0 = 1; k0 <= m / 2; k0 += 16) split_block(t, k0, out);
}

}  // namespace

void add_fft_avx512(KernelTable& t) { t.fft.real_forward = real_forward; }

}  // namespace pk::kernels
