// SiLU, sigmoid, GELU, ReLU and GLU match double-precision references (SiLU over a range that reaches the
// vector exp's clamps), work in place where allowed, and give the same bits for any team size,
// at every ISA level (ReLU has one portable version).
#include <cmath>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "kernels/ops_activation.h"
#include "test_kernel_ops_util.h"

namespace {

class KernelActivation : public isa_test::LevelTest {};

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

TEST_P(KernelActivation, SiluIsWithinAFewUlpsAcrossTheWholeRange) {
    pk::ThreadTeam team(2);
    for (int64_t n : {1, 5, 80, 513, 17 * 513}) {
        auto x = kt::random_vector(n, 51 + n, -100.0f, 100.0f);
        x[0] = 0.0f;
        std::vector<double> want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = x[i] * sigmoid(x[i]);
        auto y = kt::poisoned(n);
        pk::kernels::silu(kernels(), team, x.data(), n, y.data());
        kt::expect_near_all(y, want, 1e-30, 6e-7, "silu n=" + std::to_string(n));
        pk::kernels::silu(kernels(), team, x.data(), n, x.data());
        EXPECT_EQ(x, y) << "silu in place, n=" << n;
    }
}

TEST_P(KernelActivation, SigmoidIsWithinAFewUlpsAndTheSameForAnyTeam) {
    for (int64_t n : {1, 5, 80, 513, 17 * 513}) {
        auto x = kt::random_vector(n, 57 + n, -30.0f, 30.0f);
        x[0] = 0.0f;
        if (n > 2) x[1] = -100.0f, x[2] = 100.0f;  // past the vector exp's overflow and underflow
        std::vector<double> want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = sigmoid(x[i]);
        std::vector<float> first;
        for (int threads : {1, 3}) {
            pk::ThreadTeam team(threads);
            auto y = kt::poisoned(n);
            pk::kernels::sigmoid(kernels(), team, x.data(), n, y.data());
            kt::expect_near_all(y, want, 1e-30, 6e-7, "sigmoid n=" + std::to_string(n));
            if (first.empty()) first = y;
            EXPECT_EQ(y, first) << "sigmoid, " << threads << " threads, n=" << n;
        }
    }
}

TEST_P(KernelActivation, GeluIsWithinAFewUlpsOfTheExactOneAndTheSameForAnyTeam) {
    for (int64_t n : {1, 5, 80, 513, 17 * 513}) {
        auto x = kt::random_vector(n, 59 + n, -12.0f, 12.0f);
        x[0] = 0.0f;
        if (n > 4) x[1] = -50.0f, x[2] = 50.0f, x[3] = -1e-6f;
        std::vector<double> want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = 0.5 * x[i] * std::erfc(-x[i] / std::sqrt(2.0));
        std::vector<float> first;
        for (int threads : {1, 3}) {
            pk::ThreadTeam team(threads);
            auto y = kt::poisoned(n);
            pk::kernels::gelu_erf(kernels(), team, x.data(), n, y.data());
            // PyTorch's float 1 + erf loses up to 6e-8 absolute to cancellation, so the
            // absolute bound is the one that matters below zero.
            kt::expect_near_all(y, want, 4e-7, 1e-6, "gelu n=" + std::to_string(n));
            if (first.empty()) first = y;
            EXPECT_EQ(y, first) << "gelu, " << threads << " threads, n=" << n;
        }
        pk::ThreadTeam team(2);
        pk::kernels::gelu_erf(kernels(), team, x.data(), n, x.data());
        EXPECT_EQ(x, first) << "gelu in place, n=" << n;
    }
}

TEST(KernelRelu, ReluZeroesNegatives) {
    pk::ThreadTeam team(2);
    for (int64_t n : {1, 5, 513}) {
        auto x = kt::random_vector(n, 53 + n);
        std::vector<double> want(n);
        for (int64_t i = 0; i < n; ++i) want[i] = x[i] > 0 ? x[i] : 0.0;
        auto y = kt::poisoned(n);
        pk::kernels::relu(team, x.data(), n, y.data());
        kt::expect_near_all(y, want, 0.0, 0.0, "relu n=" + std::to_string(n));
        pk::kernels::relu(team, x.data(), n, x.data());
        EXPECT_EQ(x, y);
    }
}

TEST_P(KernelActivation, GluGatesFirstHalfWithSigmoidOfSecondHalf) {
    pk::ThreadTeam team(3);
    for (int64_t rows : {1, 3, 17}) {
        for (int64_t ch : {1, 5, 80, 513}) {
            const auto x = kt::random_vector(rows * 2 * ch, 54 + rows * ch, -12.0f, 12.0f);
            std::vector<double> want(rows * ch);
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t c = 0; c < ch; ++c)
                    want[r * ch + c] = x[r * 2 * ch + c] * sigmoid(x[r * 2 * ch + ch + c]);
            auto y = kt::poisoned(rows * ch);
            pk::kernels::glu(kernels(), team, x.data(), rows, ch, y.data());
            kt::expect_near_all(y, want, 1e-30, 6e-7,
                                "glu rows=" + std::to_string(rows) + " ch=" + std::to_string(ch));
        }
    }
}

TEST_P(KernelActivation, SameBitsForAnyTeamSize) {
    // 67 * 513 elements: flat chunk boundaries fall in the middle of vector blocks.
    const int64_t rows = 67, ch = 513;
    const auto x = kt::random_vector(rows * 2 * ch, 55, -30.0f, 30.0f);
    kt::expect_same_bits_for_thread_counts(
        rows * ch,
        [&](pk::ThreadTeam& team, float* y) {
            pk::kernels::silu(kernels(), team, x.data(), rows * ch, y);
        },
        "silu");
    kt::expect_same_bits_for_thread_counts(
        rows * ch,
        [&](pk::ThreadTeam& team, float* y) {
            pk::kernels::glu(kernels(), team, x.data(), rows, ch, y);
        },
        "glu");
}

TEST(KernelRelu, SameBitsForAnyTeamSize) {
    const int64_t n = 67 * 513;
    const auto x = kt::random_vector(n, 55, -30.0f, 30.0f);
    kt::expect_same_bits_for_thread_counts(
        n, [&](pk::ThreadTeam& team, float* y) { pk::kernels::relu(team, x.data(), n, y); },
        "relu");
}

INSTANTIATE_ISA_LEVELS(KernelActivation);

}  // namespace
