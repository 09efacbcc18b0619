// transpose_padded at every ISA level: each column of the source rows becomes a row of the
// destination, the destination's columns past n are zeroed, and nothing else is written, for
// full and partial tiles of rows and columns.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "isa_levels.h"
#include "kernels/transpose.h"

namespace {

class KernelTranspose : public isa_test::LevelTest {};

TEST_P(KernelTranspose, RowsBecomeColumnsAndThePaddingIsZero) {
    std::mt19937 rng(5);
    std::normal_distribution<float> d(0.0f, 1.0f);
    const float untouched = -7.5f;
    for (int64_t n : {0, 1, 15, 16, 17, 38, 126}) {
        for (int64_t cols : {1, 8, 16, 37, 64}) {
            for (int64_t pad : {0, 1, 19}) {
                const int64_t lds = cols + 3, ldd = n + pad;
                std::vector<float> src(static_cast<size_t>(n * lds));
                for (float& x : src) x = d(rng);
                // One spare row of destination after the cols rows: it must stay untouched.
                std::vector<float> dst(static_cast<size_t>((cols + 1) * ldd + 1), untouched);
                pk::kernels::transpose_padded(kernels(), src.data(), n, cols, lds, dst.data(), ldd);
                for (int64_t c = 0; c < cols; ++c)
                    for (int64_t t = 0; t < ldd; ++t)
                        ASSERT_EQ(dst[c * ldd + t], t < n ? src[t * lds + c] : 0.0f)
                            << "n=" << n << " cols=" << cols << " ldd=" << ldd << " c=" << c << " t=" << t;
                for (size_t i = static_cast<size_t>(cols * ldd); i < dst.size(); ++i)
                    ASSERT_EQ(dst[i], untouched) << "written past the rows: n=" << n << " cols=" << cols;
            }
        }
    }
}

INSTANTIATE_ISA_LEVELS(KernelTranspose);

}  // namespace
