// A residual block with an identity shortcut, y = ReLU(conv2(ReLU(conv1(x))) + x) with conv1 and
// conv2 3x3, stride-1 Winograd convolutions (ResNet34's blocks but each stage's first), run a band
// of 16 time rows at a time, a thread per band (band_workers.h): a band's input, conv1 rows and
// output stay in the core's L2 where whole maps (ResNet34's first stage: 10 MB) went through
// memory between the two convolutions. conv1's rows for a band and its halo sit on the whole
// map's 4-row tile grid, so the bands give the bits of running each convolution over the whole
// map, for any team size. (CAM++'s head has such blocks too, on 5 MB maps: in bands they measured
// no faster.)
#pragma once

#include <cstdint>

#include "model/speaker/conv2d_gemm.h"

namespace pk::speaker {

// Whether conv1 then conv2 make such a block: both Winograd, conv1's input as wide as conv2's
// output.
bool identity_block_in_bands(const Conv2dGemm& conv1, const Conv2dGemm& conv2);

// y [T, F, C] = the block of x [T, F, C] (identity_block_in_bands(conv1, conv2)); y must not
// overlap x.
void run_identity_block_in_bands(ThreadTeam& team, Arena& arena, const Conv2dGemm& conv1, const Conv2dGemm& conv2,
                                 const float* x, int64_t T, int64_t F, float* y);

}  // namespace pk::speaker
