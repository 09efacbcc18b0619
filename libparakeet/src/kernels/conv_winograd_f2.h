// The input and output transforms of Winograd's F(2x2, 3x3) for a 3x3, stride-1, zero-padding-1
// convolution on channels-last maps [T, F, C] (element (t, f, c) at (t * F + f) * C + c). The
// map is cut into 2x2-output tiles, tile i at time 2 (i / tiles_f) and frequency 2 (i % tiles_f)
// with tiles_f = (F + 1) / 2; the products between the transforms (16 matrix products over the
// channels) are the caller's (model/speaker/winograd_conv3x3.h).
//
// The transforms only add and subtract, so every level gives the same bits, and a tile's values
// depend on nothing but its input: the split of tiles across threads changes none.
#pragma once

#include <cstdint>

namespace pk::kernels {

// Floats of the scratch `work` each transform call needs for C channels.
constexpr int64_t winograd_f2_work_floats(int64_t C) { return 17 * C; }

// v[k][i][c] (k < 16, i < tiles, c < C) = (B^T d B)[k] of the 4x4 input tile d of tile first + i
// (frequency 2 tf - 1 + a, time 2 tt - 1 + b; zero outside the map), B^T = [1 0 -1 0; 0 1 1 0;
// 0 -1 1 0; 0 1 0 -1].
using WinogradF2InputFn = void (*)(const float* x, int64_t T, int64_t F, int64_t C, int64_t first, int64_t tiles,
                                   float* work, float* v);
// The 2x2 outputs of tiles first .. first + tiles - 1 (those inside the [T, F, C] map y):
// A^T M A with A^T = [1 1 1 0; 0 1 -1 -1], M[k] = m[k][i][c], plus bias[c] (none when null),
// clamped at 0 when relu.
using WinogradF2OutputFn = void (*)(const float* m, int64_t T, int64_t F, int64_t C, int64_t first, int64_t tiles,
                                    const float* bias, bool relu, float* work, float* y);

}  // namespace pk::kernels
