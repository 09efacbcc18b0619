// ResNet34's residual block, y = ReLU(conv2(ReLU(conv1(x))) + shortcut(x)): conv1 a 3x3 conv of
// padding 1 and stride s along both axes, conv2 a 3x3, stride-1 Winograd one, the shortcut x itself
// or a 1x1 `down` conv of stride s. It runs a band of 16 output rows at a time, a thread per band
// (band_workers.h): a band's input, conv1 rows and output stay in the core's L2 where whole maps
// (ResNet34's first stage: 10 MB) went through memory between the passes, and the team meets
// once per block, not after each of its passes. conv1's rows for a band and its halo sit on the
// whole map's 4-row tile grid (a Winograd conv1's bits depend on where its tiles sit; the others'
// rows on nothing but their input), so the bands give the bits of running each convolution over
// the whole map, for any team size. (CAM++'s head has such blocks too, on 5 MB maps: in bands they
// measured no faster.)
#pragma once

#include <cstdint>

#include "model/speaker/conv2d_gemm.h"

namespace pk::speaker {

struct ResidualBlock {
    const Conv2dGemm& conv1;
    const Conv2dGemm& conv2;
    const Conv2dGemm* down;  // null: the shortcut is x itself
};

// Whether the block has the shapes above (then run_residual_block_in_bands runs it).
bool runs_in_bands(const ResidualBlock& b);

// y [T', F', C] = the block of x [T, F, in] (T' = conv1.out_t(T), F' = conv1.out_f(F)); y must
// not overlap x.
void run_residual_block_in_bands(ThreadTeam& team, Arena& arena, const ResidualBlock& b, const float* x, int64_t T,
                                 int64_t F, float* y);

}  // namespace pk::speaker
