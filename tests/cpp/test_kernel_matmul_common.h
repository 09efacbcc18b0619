// Shared helpers of the matmul tests: random data, a double-precision reference, running
// matmul() on teams of 1..4 threads. The tests are parameterised by ISA level (isa_levels.h):
// weights packed for a level run that level's kernels.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "kernels/f16.h"
#include "kernels/matmul.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace matmul_test {

using pk::kernels::PackedWeights;
using pk::kernels::WeightType;

inline pk::ThreadTeam& team(int n_threads) {
    static std::unique_ptr<pk::ThreadTeam> teams[5];
    if (!teams[n_threads]) teams[n_threads] = std::make_unique<pk::ThreadTeam>(n_threads);
    return *teams[n_threads];
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& f : v) f = dist(rng);
    return v;
}

// Raw GGUF Q8_0 rows (34-byte blocks): a half scale and 32 random int8 per block.
inline std::vector<uint8_t> random_q8_weights(int64_t N, int64_t K, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> scale(0.001f, 0.02f);
    std::uniform_int_distribution<int> quant(-128, 127);
    std::vector<uint8_t> raw(static_cast<size_t>(N * K / 32 * 34));
    for (size_t at = 0; at < raw.size(); at += 34) {
        const uint16_t d = pk::kernels::f32_to_f16(scale(rng));
        std::memcpy(&raw[at], &d, 2);
        for (int i = 0; i < 32; ++i) raw[at + 2 + i] = static_cast<uint8_t>(quant(rng));
    }
    return raw;
}

// fn(w, x, bias, what) for every shape M x N x K of the lists: random Q8_0 weights [N, K] packed
// for `level`, rows x [M, K] in [-3, 3] and a bias [N], drawn from seeds counting up from `seed`;
// `what` names the shape for failure messages.
template <class Fn>
void for_each_q8_product(pk::IsaLevel level, std::initializer_list<int64_t> Ms, std::initializer_list<int64_t> Ns,
                         std::initializer_list<int64_t> Ks, uint32_t seed, Fn fn) {
    for (int64_t M : Ms)
        for (int64_t N : Ns)
            for (int64_t K : Ks) {
                const std::vector<uint8_t> raw = random_q8_weights(N, K, seed);
                const PackedWeights w(WeightType::Q8_0, raw.data(), N, K, level);
                const std::vector<float> x = random_floats(static_cast<size_t>(M * K), seed + 1, -3.0f, 3.0f);
                const std::vector<float> bias = random_floats(static_cast<size_t>(N), seed + 2);
                fn(w, x, bias, "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K));
                seed += 5;
            }
}

// Runs matmul (by `path`) on a team of n_threads and returns y (M rows of ldy floats; columns
// past N keep the sentinel they were filled with).
inline std::vector<float> run(const PackedWeights& w, const std::vector<float>& x, int64_t M,
                              const float* bias, int n_threads, int64_t ldy = -1,
                              pk::kernels::MatmulPath path = pk::kernels::MatmulPath::Auto) {
    const int64_t stride = ldy < 0 ? w.n() : ldy;
    std::vector<float> y(static_cast<size_t>(M * stride), -12345.0f);
    pk::Arena arena;
    pk::kernels::matmul(team(n_threads), arena, x.data(), M, w.k(), w, bias, y.data(), ldy, path);
    EXPECT_EQ(arena.used_bytes(), 0u) << "matmul must give its scratch back";
    return y;
}

// Checks y against sum_k x[m][k] * wd[n][k] (+ bias) computed in double, with a tolerance of
// rel_per_term * (sum of |terms|) per element (the float rounding bound of that sum).
inline void expect_matches_reference(const std::vector<float>& y, const std::vector<double>& xd,
                                     const std::vector<double>& wd, const float* bias, int64_t M,
                                     int64_t N, int64_t K, double rel_per_term, int64_t ldy = -1) {
    const int64_t stride = ldy < 0 ? N : ldy;
    int bad = 0;
    for (int64_t m = 0; m < M; ++m) {
        for (int64_t n = 0; n < N; ++n) {
            double ref = bias ? bias[n] : 0.0, mag = bias ? std::fabs(bias[n]) : 0.0;
            for (int64_t k = 0; k < K; ++k) {
                const double t = xd[m * K + k] * wd[n * K + k];
                ref += t;
                mag += std::fabs(t);
            }
            const double got = y[m * stride + n];
            const double tol = rel_per_term * mag + 1e-30;
            if (!(std::fabs(got - ref) <= tol) && ++bad <= 5) {
                ADD_FAILURE() << "y[" << m << "][" << n << "] = " << got << ", reference " << ref
                              << ", tolerance " << tol << " (M=" << M << " N=" << N
                              << " K=" << K << ")";
            }
        }
        for (int64_t n = N; n < stride; ++n) {
            if (y[m * stride + n] != -12345.0f && ++bad <= 5) {
                ADD_FAILURE() << "wrote past N in row " << m;
            }
        }
    }
    EXPECT_EQ(bad, 0);
}

// Every team size gives the same bits as a single thread.
inline void expect_same_bits_for_any_team(const PackedWeights& w, const std::vector<float>& x,
                                          int64_t M, const float* bias) {
    const std::vector<float> one = run(w, x, M, bias, 1);
    for (int threads = 2; threads <= 4; ++threads) {
        const std::vector<float> many = run(w, x, M, bias, threads);
        EXPECT_EQ(0, std::memcmp(one.data(), many.data(), one.size() * sizeof(float)))
            << threads << " threads differ from 1 (M=" << M << " N=" << w.n() << " K=" << w.k()
            << ")";
    }
}

// Whether this CPU runs at least two SIMD levels of this build (all_levels()[1] and [2]), so
// that expect_same_bits_at_simd_levels has two levels to compare.
inline bool cpu_runs_two_simd_levels() {
    const std::vector<pk::IsaLevel>& levels = isa_test::all_levels();
    return levels.size() >= 3 && pk::cpu_features().supports(levels[2]);
}

// Weights `raw` (type, N x K) packed for the first SIMD level of this build and for every higher
// level this CPU runs give the same bits, on 1 and 2 threads: the levels' tiles differ (vector
// widths, rows per tile), not the operations on each output.
inline void expect_same_bits_at_simd_levels(WeightType type, const void* raw, int64_t N, int64_t K,
                                            const std::vector<float>& x, int64_t M, const float* bias,
                                            int64_t ldy) {
    const std::vector<pk::IsaLevel>& levels = isa_test::all_levels();
    const pk::IsaLevel first = levels[1];
    const std::vector<float> y1 = run(PackedWeights(type, raw, N, K, first), x, M, bias, 1, ldy);
    for (size_t i = 2; i < levels.size() && pk::cpu_features().supports(levels[i]); ++i) {
        const PackedWeights wi(type, raw, N, K, levels[i]);
        for (int threads : {1, 2}) {
            const std::vector<float> yi = run(wi, x, M, bias, threads, ldy);
            ASSERT_EQ(0, std::memcmp(y1.data(), yi.data(), y1.size() * sizeof(float)))
                << pk::isa_level_name(first) << " and " << pk::isa_level_name(levels[i]) << ": M=" << M
                << " N=" << N << " K=" << K << ", " << threads << " threads";
        }
    }
}

}  // namespace matmul_test
