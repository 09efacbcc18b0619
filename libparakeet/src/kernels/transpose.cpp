#include "kernels/transpose.h"

#include <algorithm>

#include "kernels/kernel_table.h"

namespace pk::kernels {

namespace {

// The scalar level's copy.
void transpose_padded_portable(const float* src, int64_t n, int64_t cols, int64_t lds, float* dst, int64_t ldd) {
    // Eight source rows at a time, so each destination row gets eight adjacent floats per pass
    // (one float per pass makes every store touch another cache line).
    constexpr int64_t kRows = 8;
    int64_t t0 = 0;
    for (; t0 + kRows <= n; t0 += kRows)
        for (int64_t c = 0; c < cols; ++c)
            for (int64_t t = t0; t < t0 + kRows; ++t) dst[c * ldd + t] = src[t * lds + c];
    for (int64_t t = t0; t < n; ++t)
        for (int64_t c = 0; c < cols; ++c) dst[c * ldd + t] = src[t * lds + c];
    for (int64_t c = 0; c < cols; ++c) std::fill(dst + c * ldd + n, dst + (c + 1) * ldd, 0.0f);
}

}  // namespace

void add_transpose_scalar(KernelTable& t) { t.attention.transpose_padded = transpose_padded_portable; }

void transpose_padded(const KernelTable& k, const float* src, int64_t n, int64_t cols, int64_t lds, float* dst,
                      int64_t ldd) {
    k.attention.transpose_padded(src, n, cols, lds, dst, ldd);
}

}  // namespace pk::kernels
