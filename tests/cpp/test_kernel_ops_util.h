// Helpers shared by the ops and conv kernel tests: deterministic random inputs, element-wise
// comparison against double-precision references, and the thread-count determinism check.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/thread_team.h"

namespace kt {

inline std::vector<float> random_vector(size_t n, uint32_t seed, float lo = -2.0f,
                                        float hi = 2.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

// A buffer the kernel must overwrite completely: NaN everywhere, so a missed element fails
// the comparison with the reference.
inline std::vector<float> poisoned(size_t n) {
    return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN());
}

// Every element must satisfy |got - want| <= tol[i]; reports the first few that do not.
inline void expect_near_all(const std::vector<float>& got, const std::vector<double>& want,
                            const std::vector<double>& tol, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    int reported = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
        if (!(err <= tol[i])) {  // also catches NaN
            ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want "
                          << want[i] << " (tolerance " << tol[i] << ")";
            if (++reported == 5) return;
        }
    }
}

// The same with tolerance atol + rtol * |want|.
inline void expect_near_all(const std::vector<float>& got, const std::vector<double>& want,
                            double atol, double rtol, const std::string& what) {
    std::vector<double> tol(want.size());
    for (size_t i = 0; i < want.size(); ++i) tol[i] = atol + rtol * std::fabs(want[i]);
    expect_near_all(got, want, tol, what);
}

// Runs kernel(team, out) with teams of 1, 2, 3 and 4 threads and expects bitwise-identical
// outputs. The shape must be big enough that the bigger teams really split the work: that
// is checked too, so a grain change cannot silently turn this test into a no-op.
inline void expect_same_bits_for_thread_counts(
    size_t out_size, const std::function<void(pk::ThreadTeam&, float*)>& kernel,
    const std::string& what) {
    std::vector<float> first;
    for (int n = 1; n <= 4; ++n) {
        pk::ThreadTeam team(n);
        std::vector<float> out = poisoned(out_size);
        const uint64_t jobs_before = team.jobs_dispatched();
        kernel(team, out.data());
        if (n > 1) {
            EXPECT_GT(team.jobs_dispatched(), jobs_before)
                << what << ": a team of " << n << " ran everything inline; enlarge the shape";
        }
        if (n == 1) {
            first = out;
        } else {
            EXPECT_EQ(0, std::memcmp(first.data(), out.data(), out_size * sizeof(float)))
                << what << ": " << n << " threads differ from 1 thread";
        }
    }
}

}  // namespace kt
