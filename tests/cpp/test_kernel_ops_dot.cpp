// The dot-product kernel (Silero VAD's STFT, convolutions and LSTM run on it) matches a
// double-precision sum at every ISA level, for lengths around each level's block sizes, and
// gives the same bits on repeated calls and wherever the operands lie in memory.
#include <cmath>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "kernels/ops_dot.h"
#include "test_kernel_ops_util.h"

namespace {

class KernelDot : public isa_test::LevelTest {};

TEST_P(KernelDot, MatchesADoubleSumAtEveryLength) {
    for (int64_t n : {0, 1, 7, 8, 9, 31, 32, 33, 129, 195, 256, 387, 1000}) {
        const auto a = kt::random_vector(n + 1, 11 + n);
        const auto b = kt::random_vector(n + 1, 97 + n);
        double want = 0, scale = 0;
        for (int64_t i = 0; i < n; ++i) {
            want += static_cast<double>(a[i]) * b[i];
            scale += std::fabs(static_cast<double>(a[i]) * b[i]);
        }
        const float got = pk::kernels::dot(kernels(), a.data(), b.data(), n);
        EXPECT_NEAR(got, want, 1e-6 * scale + 1e-30) << "n=" << n;
        // Unaligned operands (one float in) give the same bits as a copy at another address.
        std::vector<float> a2(a.begin(), a.begin() + n), b2(b.begin(), b.begin() + n);
        std::vector<float> shifted(n + 1);
        for (int64_t i = 0; i < n; ++i) shifted[i + 1] = a2[i];
        EXPECT_EQ(pk::kernels::dot(kernels(), shifted.data() + 1, b2.data(), n), got) << "n=" << n;
    }
}

INSTANTIATE_ISA_LEVELS(KernelDot);

}  // namespace
