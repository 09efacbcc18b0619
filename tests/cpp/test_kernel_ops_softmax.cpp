// softmax and log_softmax match double-precision references on odd shapes (with large
// logits, where a missing max subtraction overflows), handle -inf entries, work in place,
// and give the same bits for any team size and in the serial variant, at every ISA level.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "kernels/kernel_table.h"
#include "kernels/ops_softmax.h"
#include "test_kernel_ops_util.h"

namespace {

class KernelSoftmax : public isa_test::LevelTest {};

std::vector<double> reference(const std::vector<float>& x, int64_t rows, int64_t cols, bool log) {
    std::vector<double> y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x.data() + r * cols;
        double m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(xr[c]));
        double sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) sum += std::exp(xr[c] - m);
        for (int64_t c = 0; c < cols; ++c)
            y[r * cols + c] = log ? (xr[c] - m) - std::log(sum) : std::exp(xr[c] - m) / sum;
    }
    return y;
}

TEST_P(KernelSoftmax, MatchesDoubleReferenceOnOddShapes) {
    pk::ThreadTeam team(2);
    for (int64_t rows : {1, 3, 17}) {
        for (int64_t cols : {1, 5, 80, 513}) {
            // Logits up to +-100: exp(100) overflows float without the max subtraction.
            auto x = kt::random_vector(rows * cols, 31 + rows * cols, -100.0f, 100.0f);
            const std::string what = "rows=" + std::to_string(rows) + " cols=" + std::to_string(cols);

            auto y = kt::poisoned(x.size());
            pk::kernels::softmax(kernels(), team, x.data(), rows, cols, y.data());
            kt::expect_near_all(y, reference(x, rows, cols, false), 1e-12, 1e-5, what + " softmax");

            auto ly = kt::poisoned(x.size());
            pk::kernels::log_softmax(kernels(), team, x.data(), rows, cols, ly.data());
            kt::expect_near_all(ly, reference(x, rows, cols, true), 2e-5, 2e-6,
                                what + " log_softmax");

            auto in_place = x;
            pk::kernels::softmax(kernels(), team, in_place.data(), rows, cols, in_place.data());
            EXPECT_EQ(in_place, y) << what << ": softmax in place";
            in_place = x;
            pk::kernels::log_softmax(kernels(), team, in_place.data(), rows, cols, in_place.data());
            EXPECT_EQ(in_place, ly) << what << ": log_softmax in place";
        }
    }
}

TEST_P(KernelSoftmax, ExponentialIsAccurateOverTheWholeRange) {
    // softmax([0, v]) = [1, e^v] / (1 + e^v): the second entry is as accurate as exp(v), with
    // no long sum in the way. Within a few float ulps (2^-24 ~ 6e-8) for v down to -87.
    pk::ThreadTeam team(1);
    const int64_t rows = 4099;
    std::vector<float> x(2 * rows);
    const auto v = kt::random_vector(rows, 42, -87.0f, 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
        x[2 * r] = 0.0f;
        x[2 * r + 1] = v[r];
    }
    auto y = kt::poisoned(x.size());
    pk::kernels::softmax(kernels(), team, x.data(), rows, 2, y.data());
    kt::expect_near_all(y, reference(x, rows, 2, false), 0.0, 4e-7, "softmax pairs");
}

TEST_P(KernelSoftmax, MinusInfinityGetsZeroProbability) {
    pk::ThreadTeam team(1);
    const float inf = std::numeric_limits<float>::infinity();
    // 11 columns: the -inf entries sit both in the vector body and in the tail.
    std::vector<float> x = {-inf, 0.5f, -inf, 2.0f, 1.0f, -inf, 0.0f, 3.0f, -inf, -1.0f, -inf};
    const int64_t cols = static_cast<int64_t>(x.size());
    auto y = kt::poisoned(x.size());
    pk::kernels::softmax(kernels(), team, x.data(), 1, cols, y.data());
    std::vector<float> finite = x;
    for (float& v : finite) v = std::isinf(v) ? -1e30f : v;  // exp underflows to exactly 0
    kt::expect_near_all(y, reference(finite, 1, cols, false), 1e-12, 1e-5, "softmax with -inf");
    for (int64_t c = 0; c < cols; ++c)
        if (std::isinf(x[c])) EXPECT_EQ(y[c], 0.0f) << c;

    auto ly = kt::poisoned(x.size());
    pk::kernels::log_softmax(kernels(), team, x.data(), 1, cols, ly.data());
    const auto want = reference(finite, 1, cols, true);
    for (int64_t c = 0; c < cols; ++c) {
        if (std::isinf(x[c])) {
            EXPECT_EQ(ly[c], -inf) << c;
        } else {
            EXPECT_NEAR(ly[c], want[c], 1e-5) << c;
        }
    }
}

// The attention kernels normalise their score rows with the table's row kernel on the calling
// thread: the same bits as softmax() on a team.
TEST_P(KernelSoftmax, SerialVersionGivesTheSameBits) {
    pk::ThreadTeam team(3);
    const int64_t rows = 37, cols = 513;
    const auto x = kt::random_vector(rows * cols, 43, -20.0f, 20.0f);
    auto teamed = kt::poisoned(x.size()), serial = kt::poisoned(x.size());
    pk::kernels::softmax(kernels(), team, x.data(), rows, cols, teamed.data());
    kernels().ops.softmax_rows(x.data(), rows, cols, serial.data());
    EXPECT_EQ(0, std::memcmp(teamed.data(), serial.data(), x.size() * sizeof(float)));
}

TEST_P(KernelSoftmax, SameBitsForAnyTeamSize) {
    const int64_t rows = 37, cols = 513;
    const auto x = kt::random_vector(rows * cols, 41, -20.0f, 20.0f);
    kt::expect_same_bits_for_thread_counts(
        x.size(),
        [&](pk::ThreadTeam& team, float* y) {
            pk::kernels::softmax(kernels(), team, x.data(), rows, cols, y);
        },
        "softmax");
    kt::expect_same_bits_for_thread_counts(
        x.size(),
        [&](pk::ThreadTeam& team, float* y) {
            pk::kernels::log_softmax(kernels(), team, x.data(), rows, cols, y);
        },
        "log_softmax");
}

INSTANTIATE_ISA_LEVELS(KernelSoftmax);

}  // namespace
