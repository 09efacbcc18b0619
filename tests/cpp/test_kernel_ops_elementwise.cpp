// add, add_scaled, scale and add_bias compute exactly the float expressions they name, in
// place too, and give the same bits for any team size.
#include <string>
#include <vector>

#include "kernels/ops_elementwise.h"
#include "test_kernel_ops_util.h"

namespace {

// The kernels are single float operations, so the expected values are computed in float
// too and compared exactly.
std::vector<double> as_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

TEST(KernelElementwise, ComputeTheirExpressionsExactly) {
    pk::ThreadTeam team(2);
    const float alpha = 0.5f;
    for (int64_t n : {1, 5, 80, 513, 17 * 513}) {
        const auto a = kt::random_vector(n, 61 + n);
        const auto b = kt::random_vector(n, 62 + n);
        std::vector<float> sum(n), axpy(n), scaled(n);
        for (int64_t i = 0; i < n; ++i) {
            sum[i] = a[i] + b[i];
            axpy[i] = a[i] + alpha * b[i];
            scaled[i] = alpha * a[i];
        }
        const std::string what = "n=" + std::to_string(n);
        auto y = kt::poisoned(n);
        pk::kernels::add(team, a.data(), b.data(), n, y.data());
        kt::expect_near_all(y, as_double(sum), 0.0, 0.0, what + " add");
        pk::kernels::add_scaled(team, a.data(), b.data(), alpha, n, y.data());
        kt::expect_near_all(y, as_double(axpy), 0.0, 0.0, what + " add_scaled");
        pk::kernels::scale(team, a.data(), alpha, n, y.data());
        kt::expect_near_all(y, as_double(scaled), 0.0, 0.0, what + " scale");

        auto in_place = a;
        pk::kernels::add_scaled(team, in_place.data(), b.data(), alpha, n, in_place.data());
        EXPECT_EQ(in_place, axpy) << what << " add_scaled in place (a)";
        in_place = b;
        pk::kernels::add(team, a.data(), in_place.data(), n, in_place.data());
        EXPECT_EQ(in_place, sum) << what << " add in place (b)";
        in_place = a;
        pk::kernels::scale(team, in_place.data(), alpha, n, in_place.data());
        EXPECT_EQ(in_place, scaled) << what << " scale in place";
    }
}

TEST(KernelElementwise, AddBiasAddsTheVectorToEveryRow) {
    pk::ThreadTeam team(3);
    for (int64_t rows : {1, 3, 17}) {
        for (int64_t cols : {1, 5, 80, 513}) {
            const auto x = kt::random_vector(rows * cols, 63 + rows * cols);
            const auto bias = kt::random_vector(cols, 64);
            std::vector<float> want(rows * cols);
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t c = 0; c < cols; ++c) want[r * cols + c] = x[r * cols + c] + bias[c];
            auto y = kt::poisoned(x.size());
            pk::kernels::add_bias(team, x.data(), rows, cols, bias.data(), y.data());
            kt::expect_near_all(y, as_double(want), 0.0, 0.0,
                                "rows=" + std::to_string(rows) + " cols=" + std::to_string(cols));
            auto in_place = x;
            pk::kernels::add_bias(team, in_place.data(), rows, cols, bias.data(), in_place.data());
            EXPECT_EQ(in_place, want);
        }
    }
}

TEST(KernelElementwise, SameBitsForAnyTeamSize) {
    const int64_t rows = 67, cols = 513, n = rows * cols;
    const auto a = kt::random_vector(n, 65);
    const auto b = kt::random_vector(n, 66);
    const auto bias = kt::random_vector(cols, 67);
    kt::expect_same_bits_for_thread_counts(
        n, [&](pk::ThreadTeam& t, float* y) { pk::kernels::add(t, a.data(), b.data(), n, y); },
        "add");
    kt::expect_same_bits_for_thread_counts(
        n,
        [&](pk::ThreadTeam& t, float* y) {
            pk::kernels::add_scaled(t, a.data(), b.data(), 0.5f, n, y);
        },
        "add_scaled");
    kt::expect_same_bits_for_thread_counts(
        n, [&](pk::ThreadTeam& t, float* y) { pk::kernels::scale(t, a.data(), 0.5f, n, y); },
        "scale");
    kt::expect_same_bits_for_thread_counts(
        n,
        [&](pk::ThreadTeam& t, float* y) {
            pk::kernels::add_bias(t, a.data(), rows, cols, bias.data(), y);
        },
        "add_bias");
}

}  // namespace
