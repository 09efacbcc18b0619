// Rounding a size up to a multiple: the padding of the attention drivers' operands to their
// block kernels' row and column tiles.
#pragma once

#include <cstdint>

namespace pk::kernels {

// The smallest multiple of m (> 0) that is >= n (>= 0).
inline int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

}  // namespace pk::kernels
