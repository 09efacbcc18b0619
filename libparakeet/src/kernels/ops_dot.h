// Dot products of contiguous float vectors, the building block of small matrix-vector
// networks run one frame at a time (Silero VAD's STFT, convolutions and LSTM cell).
// Each level sums in a fixed order of its own, so a result depends on the level (within float
// rounding) but never on the call's neighbours or on threads.
#pragma once

#include <cstdint>

#include "kernels/kernel_table.h"

namespace pk::kernels {

// a · b over n elements, with the table's kernel.
static inline float dot(const KernelTable& t, const float* a, const float* b, int64_t n) { return t.dot.dot(a, b, n); }

}  // namespace pk::kernels
