// The portable real FFT (fft.cpp) and the steps of it that a level's FFT shares: the parts
// that are plain data movement or a handful of bins, so every level computes them alike.
// Declarations only: the code lives in fft.cpp, compiled at the baseline.
#pragma once

#include "kernels/kernel_table.h"

namespace pk::kernels {

// The scalar level's FftKernels::real_forward, which a level's FFT runs for the lengths its
// vectors do not fit.
void real_fft_portable(const RealFftTables& t, const float* in, float* out);

// out[2 bitrev[j]], out[2 bitrev[j] + 1] = in[2j], in[2j + 1]: the n/2 complex inputs of the
// transform, packed from pairs of real samples in bit-reversed order for the DIT stages.
void fft_pack_bit_reversed(const RealFftTables& t, const float* in, float* out);

// The split step's bins 0 and n/2 (both real) from the complex transform's Z[0] in out[0..1].
void fft_split_ends(const RealFftTables& t, float* out);

}  // namespace pk::kernels
