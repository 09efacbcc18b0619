// The input and output transforms of Winograd's F(4x4, 3x3) (Lavin and Gray, 2016; points 0,
// +-1, +-2 and infinity) for a 3x3, stride-1, zero-padding-1 convolution on channels-last maps
// [T, F, C] (element (t, f, c) at (t * F + f) * C + c). The map is cut into 4x4-output tiles,
// tile i at time 4 (i / tiles_f) and frequency 4 (i % tiles_f) with tiles_f = (F + 3) / 4; the
// 36 products between the transforms (matrix products over the channels) are the caller's
// (model/speaker/winograd_conv3x3.h).
//
// A tile's values depend on nothing but its input, so the split of tiles across threads changes
// no bit; the levels may differ by rounding (their compilers fuse the transforms' multiply-adds
// or not).
#pragma once

#include <cstdint>

namespace pk::kernels {

// Floats of the scratch `work` each transform call needs for C channels.
constexpr int64_t winograd_f4_work_floats(int64_t C) { return 37 * C; }

// Where a run of tiles' transformed values sit: value (k, i, c) of position k < 36, tile i of
// the run and channel c at k * position + i * tile + c (in floats). Position-major ({tiles * C,
// C}) keeps each position's rows together; tile-major ({C, 36 * C}) writes and reads a tile's
// 36 rows as one run.
struct WinogradF4Layout {
    int64_t position, tile;
};

// v(k, i, c) (k < 36, i < tiles, c < C; `layout`) = (B^T d B)[k] of the 6x6 input tile d of
// tile first + i (d[a][b] at frequency 4 tf - 1 + a and time 4 tt - 1 + b), with
// B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1].
// The times count from x's row 0; the rows [t_begin, t_end) of x (t_begin <= 0: a band of a map
// may read the rows above it) are the map, and the input is zero outside them and outside the
// F frequencies. The whole map [T, F, C] is t_begin = 0, t_end = T.
using WinogradF4InputFn = void (*)(const float* x, int64_t t_begin, int64_t t_end, int64_t F, int64_t C,
                                   int64_t first, int64_t tiles, WinogradF4Layout layout, float* work, float* v);
// The 4x4 outputs of tiles first .. first + tiles - 1 (those inside the [T, F, C] map y):
// A^T M A with A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1], M[k] = m(k, i, c)
// (`layout`), plus bias[c] (none when null), then plus the residual map's value at the same
// place (a map like y; none when null), clamped at 0 when relu.
using WinogradF4OutputFn = void (*)(const float* m, WinogradF4Layout layout, int64_t T, int64_t F, int64_t C,
                                    int64_t first, int64_t tiles, const float* bias, const float* residual, bool relu,
                                    float* work, float* y);

}  // namespace pk::kernels
