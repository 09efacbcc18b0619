// layer_norm matches PyTorch's LayerNorm (biased variance, eps inside the square root) on odd
// shapes, works in place, and gives the same bits for any team size, at every ISA level.
#include <cmath>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "kernels/ops_layer_norm.h"
#include "test_kernel_ops_util.h"

namespace {

class KernelLayerNorm : public isa_test::LevelTest {};

std::vector<double> reference(const std::vector<float>& x, int64_t rows, int64_t cols,
                              const std::vector<float>& w, const std::vector<float>& b,
                              double eps) {
    std::vector<double> y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
        double mean = 0.0;
        for (int64_t c = 0; c < cols; ++c) mean += x[r * cols + c];
        mean /= cols;
        double var = 0.0;
        for (int64_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
        var /= cols;
        for (int64_t c = 0; c < cols; ++c)
            y[r * cols + c] = (x[r * cols + c] - mean) / std::sqrt(var + eps) * w[c] + b[c];
    }
    return y;
}

TEST_P(KernelLayerNorm, MatchesDoubleReferenceOnOddShapes) {
    pk::ThreadTeam team(3);
    for (int64_t rows : {1, 3, 17}) {
        for (int64_t cols : {1, 5, 80, 513}) {
            // An offset mean tests that the variance is taken around the mean.
            auto x = kt::random_vector(rows * cols, 11 + rows * cols, 1.0f, 5.0f);
            const auto w = kt::random_vector(cols, 12, -1.5f, 1.5f);
            const auto b = kt::random_vector(cols, 13);
            const auto want = reference(x, rows, cols, w, b, 1e-5);
            auto y = kt::poisoned(x.size());
            pk::kernels::layer_norm(kernels(), team, x.data(), rows, cols, w.data(), b.data(), 1e-5f,
                                    y.data());
            const std::string what = "rows=" + std::to_string(rows) + " cols=" + std::to_string(cols);
            kt::expect_near_all(y, want, 2e-5, 2e-5, what);

            pk::kernels::layer_norm(kernels(), team, x.data(), rows, cols, w.data(), b.data(), 1e-5f,
                                    x.data());
            EXPECT_EQ(x, y) << what << ": in place differs from out of place";
        }
    }
}

TEST_P(KernelLayerNorm, EpsMattersForNearConstantRows) {
    // With var ~ 0 the output is (x - mean) / sqrt(eps): a dropped or misplaced eps shows.
    pk::ThreadTeam team(1);
    const int64_t cols = 9;
    std::vector<float> x(cols, 0.25f);
    x[4] = 0.25f + 1e-3f;
    const std::vector<float> w(cols, 1.0f), b(cols, 0.0f);
    const auto want = reference(x, 1, cols, w, b, 1e-3);
    auto y = kt::poisoned(cols);
    pk::kernels::layer_norm(kernels(), team, x.data(), 1, cols, w.data(), b.data(), 1e-3f, y.data());
    kt::expect_near_all(y, want, 1e-4, 1e-3, "eps=1e-3");
}

TEST_P(KernelLayerNorm, SameBitsForAnyTeamSize) {
    const int64_t rows = 67, cols = 513;
    const auto x = kt::random_vector(rows * cols, 21);
    const auto w = kt::random_vector(cols, 22);
    const auto b = kt::random_vector(cols, 23);
    kt::expect_same_bits_for_thread_counts(
        x.size(),
        [&](pk::ThreadTeam& team, float* y) {
            pk::kernels::layer_norm(kernels(), team, x.data(), rows, cols, w.data(), b.data(), 1e-5f,
                                    y);
        },
        "layer_norm");
}

INSTANTIATE_ISA_LEVELS(KernelLayerNorm);

}  // namespace
