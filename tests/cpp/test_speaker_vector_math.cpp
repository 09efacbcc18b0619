// The speaker encoders' vectorised elementwise maths (model/speaker/vector_math.h) against the
// C library's: exp on [-87, 0] to 3 ulp, tanh to 2e-7 absolute and 1e-6 relative over
// [-50, 50], 1 and -1 past |x| = 10, signs and zeros kept, and a length that leaves a partial run;
// the column moments equal a column-at-a-time double sum bit for bit, for any team size.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "model/speaker/vector_math.h"

namespace {

TEST(SpeakerVectorMath, ExpFromMinus87IsWithinThreeUlp) {
    for (float x = -87.0f; x <= 0.0f; x += 0.0013f) {
        const double want = std::exp(static_cast<double>(x));
        EXPECT_NEAR(pk::speaker::exp_from_minus_87(x), want, 3 * 1.2e-7 * want) << "x = " << x;
    }
    EXPECT_EQ(pk::speaker::exp_from_minus_87(0.0f), 1.0f);
}

TEST(SpeakerVectorMath, TanhMatchesTheLibrarys) {
    std::vector<float> x;
    for (float v = -50.0f; v <= 50.0f; v += 0.00731f) x.push_back(v);
    x.push_back(1e-30f);
    x.push_back(-1e-30f);
    x.push_back(0.0f);
    x.push_back(-0.0f);
    std::vector<float> y = x;
    pk::speaker::tanh_in_place(y.data(), static_cast<int64_t>(y.size()));
    for (size_t i = 0; i < x.size(); ++i) {
        const double want = std::tanh(static_cast<double>(x[i]));
        EXPECT_NEAR(y[i], want, 2e-7 + 1e-6 * std::fabs(want)) << "x = " << x[i];
        EXPECT_EQ(std::signbit(y[i]), std::signbit(x[i])) << "x = " << x[i];
        if (std::fabs(x[i]) > 10.0f) EXPECT_EQ(std::fabs(y[i]), 1.0f) << "x = " << x[i];
    }
}

TEST(SpeakerVectorMath, ColumnMomentsEqualTheColumnSumsForAnyTeam) {
    // 300 columns: a task of 256 and a partial one; an offset so the mean is far from zero.
    const int64_t T = 37, cols = 300;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-3.0f, 5.0f);
    std::vector<float> x(static_cast<size_t>(T * cols));
    for (float& v : x) v = u(rng);
    for (int threads : {1, 2, 3}) {
        pk::ThreadTeam team(threads);
        std::vector<double> mean(cols, -1.0), dev(cols, -1.0);
        pk::speaker::column_moments(team, x.data(), T, cols, mean.data(), dev.data());
        for (int64_t c = 0; c < cols; ++c) {
            double sum = 0, sq = 0;
            for (int64_t t = 0; t < T; ++t) sum += x[t * cols + c];
            const double m = sum / static_cast<double>(T);
            for (int64_t t = 0; t < T; ++t) sq += (x[t * cols + c] - m) * (x[t * cols + c] - m);
            EXPECT_EQ(mean[c], m) << threads << " threads, column " << c;
            EXPECT_EQ(dev[c], sq) << threads << " threads, column " << c;
        }
    }
}

}  // namespace
