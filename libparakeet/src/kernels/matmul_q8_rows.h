// Q8_0 products on activations quantised beforehand.
//
// matmul() quantises each row of x per block of 32 as it packs it. A convolution run as a
// product on its unfolded input (model/speaker/conv2d_gemm.h) would so quantise each input
// value once per tap: 9 times for a 3x3 kernel. Quantising the map once and gathering its
// quantised blocks into the unfolded rows gives the very rows matmul() would have quantised,
// provided every block of 32 of an unfolded row is one block of the map (a tap's run of
// channels, 32 channels a block). These entries quantise rows once and take such rows; the
// products are matmul()'s, bit for bit, at every ISA level.
#pragma once

#include <cstdint>

#include "kernels/matmul.h"
#include "kernels/quantize_q8_0.h"
#include "runtime/arena.h"
#include "runtime/cpu_features.h"
#include "runtime/thread_team.h"

namespace pk::kernels {

// Rows of K values (K % 32 == 0) quantised as matmul() quantises activations for Q8_0 weights:
// per block of 32, scale d = max|x| / 127 and q = round-half-even(x * 127 / max|x|) (0 where
// the block is 0), and the block's correction -128 * (sum of its q), which the VNNI tiles take
// (their weights are stored +128). Row r's values are q[r * K, +K), its blocks' scales and
// corrections scale / corr[r * K / 32, +K / 32).
struct Q8Rows {
    int8_t* q;
    float* scale;
    int32_t* corr;
};

// Whether a convolution's weight w, of `taps` taps over `in` channels, can take its input
// quantised once and gathered: Q8_0 blocks that are each one tap's run of 32 channels (columns in
// tap-major order, or a single tap, and `in` a multiple of 32).
inline bool q8_blocks_are_taps(const PackedWeights& w, bool tap_major, int64_t taps, int64_t in) {
    return w.type() == WeightType::Q8_0 && (tap_major || taps == 1) && in % kQ8_0BlockValues == 0;
}

// Room for `rows` rows of K values from `arena` (given back with the arena's scope).
Q8Rows alloc_q8_rows(Arena& arena, int64_t rows, int64_t K);

// Rows [0, rows) of x (row stride ldx >= K) quantised into `out` by the kernels of `level`
// (every level gives the same bits), split over the team (contiguous rows as one run of blocks,
// so that rows of one block still quantise 8 blocks per call). Throws
// std::invalid_argument when K is not a positive multiple of 32 or ldx < K.
void quantize_q8_rows(IsaLevel level, ThreadTeam& team, const float* x, int64_t rows, int64_t K, int64_t ldx,
                      const Q8Rows& out);

// y[m * ldy + j] = row m · W[j] + bias[j] for m < M, with Q8_0 weights w (K == w.k()): the bits
// matmul() gives on the Gemm path for the x these rows were quantised from. ldy < 0 means N.
// Scratch comes from `scratch` and is given back. Throws std::invalid_argument for other
// weight types or mismatched sizes.
void matmul_q8_rows(ThreadTeam& team, Arena& scratch, const Q8Rows& x, int64_t M, int64_t K,
                    const PackedWeights& w, const float* bias, float* y, int64_t ldy = -1);

// Rows gathered from a quantised map's rows of `run` values (run a multiple of 32 that divides
// K): values [t * run, (t + 1) * run) of row m are map row sources[m * (K / run) + t], or zeros
// where that is -1. An unfolded convolution's rows, each run one tap's channels, without the
// copy: the product's packing reads the map's blocks where they are.
struct Q8Gather {
    Q8Rows map;
    int64_t run;
    const int64_t* sources;
};

// matmul_q8_rows on the rows `x` gathers: the bits matmul() gives for the float rows gathered
// the same way. Throws std::invalid_argument as matmul_q8_rows does, and for a run that is not
// a multiple of 32 dividing K.
void matmul_q8_gather(ThreadTeam& team, Arena& scratch, const Q8Gather& x, int64_t M, int64_t K,
                      const PackedWeights& w, const float* bias, float* y, int64_t ldy = -1);

}  // namespace pk::kernels
