// The speaker networks' row passes (OpsKernels::affine_clamp_rows, add_clamp and clamped_sum_rows,
// ops_rows_body.h) at every ISA level: each output is its formula's value (the affine's product and
// sum rounded once or twice: FMA levels round once), row strides are honoured and the columns past
// `cols` left alone, y may be the input, a NaN passes through the clamps as std::max / std::min pass
// it, and lengths around every vector width give the same value per element.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "test_kernel_ops_util.h"

namespace {

class KernelOpsRows : public isa_test::LevelTest {};

constexpr float kInf = std::numeric_limits<float>::infinity();

float clamped(float v, bool clamp, float hi) { return clamp ? std::min(std::max(v, 0.0f), hi) : v; }

TEST_P(KernelOpsRows, AffineClampRowsIsItsFormula) {
    const int64_t rows = 5, ldx = 53, ldy = 61;
    for (int64_t cols : {1, 7, 16, 17, 32, 45}) {
        const auto x = kt::random_vector(rows * ldx, 71 + cols);
        const auto scale = kt::random_vector(cols, 72);
        const auto shift = kt::random_vector(cols, 73);
        for (bool affine : {false, true})
            for (float hi : {kInf, 0.75f})
                for (bool clamp : {false, true}) {
                    auto y = kt::poisoned(rows * ldy);
                    kernels().ops.affine_clamp_rows(x.data(), ldx, rows, cols, affine ? scale.data() : nullptr,
                                                    affine ? shift.data() : nullptr, clamp, hi, y.data(), ldy);
                    const std::string what = "cols " + std::to_string(cols) + (affine ? " affine" : "") +
                                             (clamp ? " clamp " + std::to_string(hi) : "");
                    for (int64_t r = 0; r < rows; ++r) {
                        for (int64_t c = 0; c < cols; ++c) {
                            const float v = x[r * ldx + c];
                            // One rounding (FMA) or two: within an ulp of the double value.
                            const double exact = affine ? static_cast<double>(v) * scale[c] + shift[c] : v;
                            const float want = clamped(static_cast<float>(exact), clamp, hi);
                            EXPECT_NEAR(y[r * ldy + c], want, 2e-7 * (std::fabs(exact) + 1)) << what;
                        }
                        for (int64_t c = cols; c < ldy; ++c)
                            EXPECT_TRUE(std::isnan(y[r * ldy + c])) << what << ": wrote past the row";
                    }
                }
    }
}

TEST_P(KernelOpsRows, AffineClampRowsInPlaceGivesTheSameBits) {
    const int64_t rows = 3, cols = 37;
    const auto x = kt::random_vector(rows * cols, 81);
    const auto scale = kt::random_vector(cols, 82);
    const auto shift = kt::random_vector(cols, 83);
    auto apart = kt::poisoned(x.size());
    kernels().ops.affine_clamp_rows(x.data(), cols, rows, cols, scale.data(), shift.data(), true, kInf, apart.data(),
                                    cols);
    auto in_place = x;
    kernels().ops.affine_clamp_rows(in_place.data(), cols, rows, cols, scale.data(), shift.data(), true, kInf,
                                    in_place.data(), cols);
    EXPECT_EQ(0, std::memcmp(apart.data(), in_place.data(), x.size() * sizeof(float)));
}

TEST_P(KernelOpsRows, AddClampIsItsFormulaAtEveryLength) {
    for (int64_t n : {0, 1, 7, 8, 15, 16, 17, 33, 100}) {
        const auto a = kt::random_vector(n + 1, 91 + n);
        const auto b = kt::random_vector(n + 1, 92 + n);
        for (float hi : {kInf, 0.5f}) {
            auto y = kt::poisoned(n + 1);
            kernels().ops.add_clamp(a.data(), b.data(), n, hi, y.data());
            for (int64_t i = 0; i < n; ++i) EXPECT_EQ(y[i], clamped(a[i] + b[i], true, hi)) << "n=" << n;
            EXPECT_TRUE(std::isnan(y[n])) << "n=" << n << ": wrote past the end";
            // In place on a: the same bits.
            auto in_place = a;
            kernels().ops.add_clamp(in_place.data(), b.data(), n, hi, in_place.data());
            EXPECT_EQ(0, std::memcmp(in_place.data(), y.data(), n * sizeof(float))) << "n=" << n;
        }
    }
}

TEST_P(KernelOpsRows, ClampedSumRowsIsItsFormula) {
    const int64_t rows = 4, lda = 41, ldb = 29, ldy = 47;
    for (int64_t cols : {1, 7, 16, 17, 29}) {
        const auto a = kt::random_vector(rows * lda, 101 + cols);
        const auto b = kt::random_vector(rows * ldb, 102 + cols);
        for (float hi : {kInf, 0.5f}) {
            auto y = kt::poisoned(rows * ldy);
            kernels().ops.clamped_sum_rows(a.data(), lda, b.data(), ldb, rows, cols, hi, y.data(), ldy);
            for (int64_t r = 0; r < rows; ++r) {
                for (int64_t c = 0; c < cols; ++c)
                    EXPECT_EQ(y[r * ldy + c], clamped(a[r * lda + c], true, hi) + clamped(b[r * ldb + c], true, hi))
                        << "cols " << cols << " hi " << hi;
                for (int64_t c = cols; c < ldy; ++c)
                    EXPECT_TRUE(std::isnan(y[r * ldy + c])) << "cols " << cols << ": wrote past the row";
            }
        }
    }
}

TEST_P(KernelOpsRows, ANanPassesThroughTheClamps) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> x(20, 1.0f), zero(20, 0.0f), y(20);
    x[3] = nan;
    x[17] = nan;
    kernels().ops.affine_clamp_rows(x.data(), 20, 1, 20, nullptr, nullptr, true, 4.0f, y.data(), 20);
    EXPECT_TRUE(std::isnan(y[3]) && std::isnan(y[17]));
    kernels().ops.add_clamp(x.data(), zero.data(), 20, kInf, y.data());
    EXPECT_TRUE(std::isnan(y[3]) && std::isnan(y[17]));
    EXPECT_EQ(y[0], 1.0f);
    kernels().ops.clamped_sum_rows(zero.data(), 20, x.data(), 20, 1, 20, 4.0f, y.data(), 20);
    EXPECT_TRUE(std::isnan(y[3]) && std::isnan(y[17]));
    EXPECT_EQ(y[0], 1.0f);
}

INSTANTIATE_ISA_LEVELS(KernelOpsRows);

}  // namespace
