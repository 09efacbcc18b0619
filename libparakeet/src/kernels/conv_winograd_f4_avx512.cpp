// The Winograd F(4x4, 3x3) transforms at the avx512 level. On tile-major values (the Q8_0
// products', WinogradF4Layout) with the channels a multiple of 16 (every 2-D speaker network's),
// a tile's 16 channels at a time go through both passes of a transform in registers, their 6x6
// intermediate in a 36-vector block on the stack, and the rows of the tiles two ahead are
// prefetched. Position-major values (the f32 products') and other channel counts take the plain
// loops of conv_winograd_f4_body.h: there, the register version's 36 stores of 16 channels land
// in rows a band apart, where the loops write each position's channels in one run (ResNet34 f32
// measured 4 % slower with it).
#include <algorithm>

#include "kernels/conv_winograd_f4_body.h"
#include "kernels/kernel_table.h"
#include "kernels/ops_vec_avx512.h"

namespace pk::kernels {

namespace {

constexpr int64_t kLanes = 16;

// B^T across six vectors (conv_winograd_f4.h).
inline void input_b(const __m512 d[6], __m512 o[6]) {
    const __m512 four = _mm512_set1_ps(4.0f), five = _mm512_set1_ps(5.0f), two = _mm512_set1_ps(2.0f);
    const __m512 p = _mm512_fnmadd_ps(four, d[2], d[4]), q = _mm512_fnmadd_ps(four, d[1], d[3]);
    const __m512 r = _mm512_sub_ps(d[4], d[2]), s = _mm512_mul_ps(two, _mm512_sub_ps(d[3], d[1]));
    o[0] = _mm512_fmadd_ps(four, d[0], _mm512_fnmadd_ps(five, d[2], d[4]));
    o[1] = _mm512_add_ps(p, q);
    o[2] = _mm512_sub_ps(p, q);
    o[3] = _mm512_add_ps(r, s);
    o[4] = _mm512_sub_ps(r, s);
    o[5] = _mm512_fmadd_ps(four, d[1], _mm512_fnmadd_ps(five, d[3], d[5]));
}

// A^T across six vectors.
inline void output_a(const __m512 m[6], __m512 o[4]) {
    const __m512 a = _mm512_add_ps(m[1], m[2]), b = _mm512_sub_ps(m[1], m[2]);
    const __m512 e = _mm512_add_ps(m[3], m[4]), g = _mm512_sub_ps(m[3], m[4]);
    o[0] = _mm512_add_ps(_mm512_add_ps(m[0], a), e);
    o[1] = _mm512_fmadd_ps(_mm512_set1_ps(2.0f), g, b);
    o[2] = _mm512_fmadd_ps(_mm512_set1_ps(4.0f), e, a);
    o[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.0f), g, b), m[5]);
}

// The rows of the tile this many tiles ahead are prefetched, by the input transform those it
// reads and by the output transform those it writes: the maps (ResNet34's first stage: 10 MB
// per 10 s) stream from beyond L2, and a tile's rows, a map row apart, stalled the transforms
// on their loads (prefetched: ResNet34 q8_0 -5 % CPU).
constexpr int64_t kPrefetchTiles = 2;

// Prefetches times [t0, t0 + n) x frequencies [f0, f0 + n) of the map [F, C] rows (clipped to
// its rows [t_begin, t_end) and its F frequencies) into L1, for writing when `write`.
inline void prefetch_square(const float* map, int64_t t_begin, int64_t t_end, int64_t F, int64_t C, int64_t t0,
                            int64_t f0, int64_t n, bool write) {
    const int64_t f_begin = std::max<int64_t>(f0, 0), f_end = std::min<int64_t>(f0 + n, F);
    if (f_begin >= f_end) return;
    const int64_t bytes = (f_end - f_begin) * C * static_cast<int64_t>(sizeof(float));
    for (int64_t t = std::max(t0, t_begin); t < std::min(t0 + n, t_end); ++t) {
        // The square's frequencies at time t are one run.
        const char* run = reinterpret_cast<const char*>(map + (t * F + f_begin) * C);
        for (int64_t o = 0; o < bytes; o += 64) {
            if (write)
                __builtin_prefetch(run + o, 1, 3);
            else
                __builtin_prefetch(run + o, 0, 3);
        }
    }
}

void input(const float* x, int64_t t_begin, int64_t t_end, int64_t F, int64_t C, int64_t first, int64_t tiles,
           WinogradF4Layout layout, float* work, float* v) {
    if (C % kLanes != 0 || layout.tile == C) {
        winograd_f4::input(x, t_begin, t_end, F, C, first, tiles, layout, work, v);
        return;
    }
    const int64_t tiles_f = (F + 3) / 4;
    float* zeros = work;  // C zeros: the input outside the map
    std::fill(zeros, zeros + C, 0.0f);
    for (int64_t i = 0; i < tiles; ++i) {
        const int64_t tile = first + i;
        const int64_t t0 = 4 * (tile / tiles_f) - 1, f0 = 4 * (tile % tiles_f) - 1;
        const float* d[36];  // d[a * 6 + b]: frequency f0 + a, time t0 + b
        for (int a = 0; a < 6; ++a)
            for (int b = 0; b < 6; ++b) {
                const int64_t f = f0 + a, t = t0 + b;
                d[a * 6 + b] = f < 0 || f >= F || t < t_begin || t >= t_end ? zeros : x + (t * F + f) * C;
            }
        float* out = v + i * layout.tile;
        const int64_t ahead = tile + kPrefetchTiles;
        prefetch_square(x, t_begin, t_end, F, C, 4 * (ahead / tiles_f) - 1, 4 * (ahead % tiles_f) - 1, 6, false);
        for (int64_t c = 0; c < C; c += kLanes) {
            __m512 r[6][6];  // B^T d: r[a][b]
            for (int b = 0; b < 6; ++b) {
                __m512 col[6], o[6];
                for (int a = 0; a < 6; ++a) col[a] = _mm512_loadu_ps(d[a * 6 + b] + c);
                input_b(col, o);
                for (int a = 0; a < 6; ++a) r[a][b] = o[a];
            }
            for (int a = 0; a < 6; ++a) {  // (B^T d) B
                __m512 o[6];
                input_b(r[a], o);
                for (int b = 0; b < 6; ++b) _mm512_storeu_ps(out + (a * 6 + b) * layout.position + c, o[b]);
            }
        }
    }
}

void output(const float* m, WinogradF4Layout layout, int64_t T, int64_t F, int64_t C, int64_t first, int64_t tiles,
            const float* bias, const float* residual, bool relu, float* work, float* y) {
    if (C % kLanes != 0 || layout.tile == C) {
        winograd_f4::output(m, layout, T, F, C, first, tiles, bias, residual, relu, work, y);
        return;
    }
    const int64_t tiles_f = (F + 3) / 4, stride = layout.position;
    const __m512 zero = _mm512_setzero_ps();
    for (int64_t i = 0; i < tiles; ++i) {
        const int64_t tile = first + i;
        const int64_t t0 = 4 * (tile / tiles_f), f0 = 4 * (tile % tiles_f);
        const int64_t p_end = std::min<int64_t>(4, F - f0), q_end = std::min<int64_t>(4, T - t0);
        const float* mk = m + i * layout.tile;
        const int64_t ahead = tile + kPrefetchTiles;
        prefetch_square(y, 0, T, F, C, 4 * (ahead / tiles_f), 4 * (ahead % tiles_f), 4, true);
        if (residual != nullptr)
            prefetch_square(residual, 0, T, F, C, 4 * (ahead / tiles_f), 4 * (ahead % tiles_f), 4, false);
        for (int64_t c = 0; c < C; c += kLanes) {
            __m512 r[4][6];  // A^T M: r[p][b]
            for (int b = 0; b < 6; ++b) {
                __m512 col[6], o[4];
                for (int a = 0; a < 6; ++a) col[a] = _mm512_loadu_ps(mk + (a * 6 + b) * stride + c);
                output_a(col, o);
                for (int p = 0; p < 4; ++p) r[p][b] = o[p];
            }
            const __m512 bv = bias != nullptr ? _mm512_loadu_ps(bias + c) : zero;
            for (int p = 0; p < p_end; ++p) {  // (A^T M) A: outputs at frequency f0 + p, times t0 .. t0 + 3
                __m512 o[4];
                output_a(r[p], o);
                for (int q = 0; q < q_end; ++q) {
                    // The bias, then the residual, added after the transform, as the portable
                    // loops do.
                    const int64_t at = ((t0 + q) * F + f0 + p) * C + c;
                    __m512 yv = bias != nullptr ? _mm512_add_ps(o[q], bv) : o[q];
                    if (residual != nullptr) yv = _mm512_add_ps(yv, _mm512_loadu_ps(residual + at));
                    if (relu) yv = _mm512_max_ps(yv, zero);
                    _mm512_storeu_ps(y + at, yv);
                }
            }
        }
    }
}

}  // namespace

void add_conv_winograd_f4_avx512(KernelTable& t) {
    t.conv.winograd_f4_input = input;
    t.conv.winograd_f4_output = output;
}

}  // namespace pk::kernels
