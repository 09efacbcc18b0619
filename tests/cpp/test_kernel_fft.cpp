// RealFft: matches a naive double-precision DFT on random input for every supported kind of
// size, handles the trivial sizes, rejects bad sizes, and is bitwise identical when the frames
// of a batch are spread over 1..4 threads, at every ISA level; every level gives the portable
// transform's bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "isa_levels.h"
#include "kernels/fft.h"
#include "runtime/thread_team.h"

namespace {

using pk::kernels::RealFft;

// The transform at every ISA level (the size checks have one portable version).
class RealFftIsa : public isa_test::LevelTest {};

// X[k] = sum_j x[j] exp(-2 pi i j k / n), k = 0..n/2, interleaved (re, im), in double.
std::vector<double> naive_dft(const std::vector<float>& x) {
    const int n = static_cast<int>(x.size());
    std::vector<double> out(2 * (n / 2 + 1));
    const double pi = 3.14159265358979323846;
    for (int k = 0; k <= n / 2; ++k) {
        double re = 0.0, im = 0.0;
        for (int j = 0; j < n; ++j) {
            // Reduce j*k mod n first so the angle stays exact for large products.
            const double a = -2.0 * pi * static_cast<double>((static_cast<int64_t>(j) * k) % n) / n;
            re += x[j] * std::cos(a);
            im += x[j] * std::sin(a);
        }
        out[2 * k] = re;
        out[2 * k + 1] = im;
    }
    return out;
}

std::vector<float> random_signal(int n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> x(n);
    for (auto& v : x) v = dist(rng);
    return x;
}

// Largest bin error relative to the signal's L2 norm. A float FFT's error grows like
// eps * log2(n) * ||x||_2 per bin, so this ratio stays near 1e-7 * log2(n) when it is right;
// a wrong twiddle or index gives an error of order 1.
double max_error_over_norm(const std::vector<float>& x, const std::vector<float>& got) {
    const std::vector<double> ref = naive_dft(x);
    double norm = 0.0;
    for (float v : x) norm += static_cast<double>(v) * v;
    norm = std::sqrt(norm);
    double err = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) err = std::max(err, std::fabs(ref[i] - got[i]));
    return norm > 0.0 ? err / norm : err;
}

TEST_P(RealFftIsa, MatchesNaiveDftOnRandomInput) {
    for (int n : {2, 4, 8, 16, 64, 256, 512, 1024, 2048}) {
        RealFft fft(n);
        ASSERT_EQ(fft.size(), n);
        ASSERT_EQ(fft.n_bins(), n / 2 + 1);
        for (uint32_t seed : {1u, 2u, 3u}) {
            const std::vector<float> x = random_signal(n, seed * 7919u + n);
            std::vector<float> out(n + 2, -999.0f);
            fft.forward(kernels(), x.data(), out.data());
            const double rel = max_error_over_norm(x, out);
            int log2n = 0;
            while ((1 << log2n) < n) ++log2n;
            EXPECT_LT(rel, 2e-7 * (log2n + 1)) << "n=" << n << " seed=" << seed;
            // The DC and Nyquist bins of a real signal are real, and exactly so here.
            EXPECT_EQ(out[1], 0.0f);
            EXPECT_EQ(out[n + 1], 0.0f);
        }
    }
}

TEST_P(RealFftIsa, ImpulseAndConstant) {
    const int n = 512;
    RealFft fft(n);
    std::vector<float> x(n, 0.0f), out(n + 2);
    // A unit impulse at j0 has |X[k]| = 1 with phase -2 pi j0 k / n.
    const int j0 = 37;
    x[j0] = 1.0f;
    fft.forward(kernels(), x.data(), out.data());
    for (int k = 0; k <= n / 2; ++k) {
        const double a = -2.0 * 3.14159265358979323846 * ((j0 * k) % n) / n;
        EXPECT_NEAR(out[2 * k], std::cos(a), 1e-6) << k;
        EXPECT_NEAR(out[2 * k + 1], std::sin(a), 1e-6) << k;
    }
    // A constant puts everything in the DC bin.
    std::fill(x.begin(), x.end(), 0.25f);
    fft.forward(kernels(), x.data(), out.data());
    EXPECT_NEAR(out[0], 0.25 * n, 1e-4);
    for (int k = 1; k <= n / 2; ++k) {
        EXPECT_NEAR(out[2 * k], 0.0, 1e-5) << k;
        EXPECT_NEAR(out[2 * k + 1], 0.0, 1e-5) << k;
    }
}

TEST(RealFft, RejectsLengthsThatAreNotPowersOfTwo) {
    for (int n : {0, 1, 3, 6, 400, 500, -4}) {
        EXPECT_THROW(RealFft{n}, std::invalid_argument) << n;
    }
}

TEST_P(RealFftIsa, BatchIsBitwiseIdenticalAcrossThreadCounts) {
    // Frames of an STFT are transformed independently; spreading them over threads must not
    // change a single bit (and the shared RealFft must be safe to use concurrently).
    const int n = 512, frames = 97;
    RealFft fft(n);
    const std::vector<float> x = random_signal(n * frames, 42);
    std::vector<float> reference;
    for (int threads : {1, 2, 3, 4}) {
        pk::ThreadTeam team(threads);
        std::vector<float> out(static_cast<size_t>(frames) * (n + 2), 0.0f);
        pk::parallel_for(team, frames, 1, [&](int64_t begin, int64_t end) {
            for (int64_t f = begin; f < end; ++f) fft.forward(kernels(), &x[f * n], &out[f * (n + 2)]);
        });
        if (reference.empty()) {
            reference = out;
        } else {
            EXPECT_EQ(0, std::memcmp(reference.data(), out.data(), out.size() * sizeof(float)))
                << "threads=" << threads;
        }
    }
}

TEST_P(RealFftIsa, GivesThePortableTransformsBits) {
    // Every level computes each bin with the portable transform's operations in its order
    // (fft.cpp), so the log-mel features are the same at every level, to the bit.
    for (int n : {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}) {
        RealFft fft(n);
        const std::vector<float> x = random_signal(n, 7000u + static_cast<uint32_t>(n));
        std::vector<float> want(static_cast<size_t>(n + 2)), got(static_cast<size_t>(n + 2));
        fft.forward(pk::kernels::kernel_table(pk::IsaLevel::Scalar), x.data(), want.data());
        fft.forward(kernels(), x.data(), got.data());
        for (int i = 0; i < n + 2; ++i) ASSERT_EQ(want[i], got[i]) << "n=" << n << " float " << i;
    }
}

INSTANTIATE_ISA_LEVELS(RealFftIsa);

}  // namespace
