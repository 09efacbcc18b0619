// Row-major to column-major copies of one attention head's rows (keys, positions, a block of
// queries), so that the attention kernels' loops over frames read contiguous memory.
#pragma once

#include <cstdint>

namespace pk::kernels {

struct KernelTable;

// dst[c * ldd + t] = src[t * lds + c] for t < n, c < cols (ldd >= n); columns [n, ldd) of each
// dst row are zeroed, so kernels that read whole tiles past n see finite values. Runs k's
// AttentionKernels::transpose_padded (a copy: the same floats at every level).
void transpose_padded(const KernelTable& k, const float* src, int64_t n, int64_t cols, int64_t lds, float* dst,
                      int64_t ldd);

}  // namespace pk::kernels
