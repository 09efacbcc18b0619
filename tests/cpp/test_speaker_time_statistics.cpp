// ECAPA's per-channel statistics over time (model/speaker/time_statistics.h) against a double
// reference computed here: the mean and std of each column, plain and under the softmax over
// time of attention logits (SpeechBrain's attentive statistics pooling), for channel counts that
// leave a partial block, a clip of 6000 frames (60 s) whose float runs must not lose accuracy,
// logits spread past exp's range, and one frame; results bitwise equal for 1, 2 and 3 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "model/speaker/time_statistics.h"
#include "test_kernel_ops_util.h"

namespace {

constexpr float kFloor = 1e-12f;

struct Stats {
    std::vector<float> mean, std;
};

// Column c's statistics under weights w (softmax over time of a's column), or equal weights.
Stats reference(const std::vector<float>& x, const std::vector<float>* a, int64_t T, int64_t C) {
    Stats s{std::vector<float>(C), std::vector<float>(C)};
    for (int64_t c = 0; c < C; ++c) {
        std::vector<double> w(static_cast<size_t>(T), 1.0 / static_cast<double>(T));
        if (a != nullptr) {
            double peak = (*a)[c], total = 0;
            for (int64_t t = 1; t < T; ++t) peak = std::max(peak, static_cast<double>((*a)[t * C + c]));
            for (int64_t t = 0; t < T; ++t) total += w[t] = std::exp((*a)[t * C + c] - peak);
            for (double& v : w) v /= total;
        }
        double m = 0, var = 0;
        for (int64_t t = 0; t < T; ++t) m += w[t] * x[t * C + c];
        for (int64_t t = 0; t < T; ++t) var += w[t] * (x[t * C + c] - m) * (x[t * C + c] - m);
        s.mean[c] = static_cast<float>(m);
        s.std[c] = static_cast<float>(std::sqrt(std::max(var, static_cast<double>(kFloor))));
    }
    return s;
}

Stats run(int threads, const std::vector<float>& x, const std::vector<float>* logits, int64_t T, int64_t C) {
    pk::ThreadTeam team(threads);
    Stats s{std::vector<float>(C), std::vector<float>(C)};
    if (logits == nullptr) {
        pk::speaker::column_stats(team, x.data(), T, C, s.mean.data(), s.std.data(), kFloor);
    } else {
        std::vector<float> a = *logits;  // softmax_stats leaves its exponentials there
        pk::speaker::softmax_stats(team, x.data(), a.data(), T, C, s.mean.data(), s.std.data(), kFloor);
    }
    return s;
}

void check(int64_t T, int64_t C, float logit_spread, float offset) {
    SCOPED_TRACE("T " + std::to_string(T) + ", C " + std::to_string(C));
    std::vector<float> x = kt::random_vector(static_cast<size_t>(T * C), 51);
    for (float& v : x) v += offset;  // a mean far from 0 tests the deviations' pass
    const std::vector<float> logits = kt::random_vector(static_cast<size_t>(T * C), 52, -logit_spread, logit_spread);
    for (const std::vector<float>* a : {static_cast<const std::vector<float>*>(nullptr), &logits}) {
        SCOPED_TRACE(a == nullptr ? "equal weights" : "softmax weights");
        const Stats want = reference(x, a, T, C), one = run(1, x, a, T, C);
        for (int64_t c = 0; c < C; ++c) {
            EXPECT_NEAR(one.mean[c], want.mean[c], 2e-6f * (1.0f + std::fabs(want.mean[c]))) << "channel " << c;
            EXPECT_NEAR(one.std[c], want.std[c], 2e-5f * want.std[c] + 1e-6f) << "channel " << c;
        }
        for (int threads : {2, 3}) {
            const Stats other = run(threads, x, a, T, C);
            EXPECT_EQ(0, std::memcmp(one.mean.data(), other.mean.data(), C * sizeof(float))) << threads << " threads";
            EXPECT_EQ(0, std::memcmp(one.std.data(), other.std.data(), C * sizeof(float))) << threads << " threads";
        }
    }
}

TEST(SpeakerTimeStatistics, MatchADoubleReferenceAtAnyThreadCount) {
    check(200, 200, 4.0f, 0.0f);      // 3 blocks of 64 and one of 8
    check(6000, 72, 6.0f, 3.0f);      // 60 s: 188 runs of 32 frames
    check(37, 130, 120.0f, 0.0f);     // logits 240 apart: most weights below e^-87
}

TEST(SpeakerTimeStatistics, OneFrameHasItsValueAsMeanAndTheFloorAsVariance) {
    const std::vector<float> x = kt::random_vector(70, 53), logits = kt::random_vector(70, 54);
    for (const std::vector<float>* a : {static_cast<const std::vector<float>*>(nullptr), &logits}) {
        const Stats s = run(2, x, a, 1, 70);
        for (int64_t c = 0; c < 70; ++c) {
            EXPECT_EQ(s.mean[c], x[c]);
            EXPECT_EQ(s.std[c], std::sqrt(kFloor));
        }
    }
}

}  // namespace
