// Half-precision conversions (kernels/f16.h) and matmul with F16 weights at every ISA level.
#include "test_kernel_matmul_common.h"

#include "kernels/f16.h"

namespace {

using namespace matmul_test;

class MatmulF16 : public isa_test::LevelTest {};
using pk::kernels::f16_to_f32;
using pk::kernels::f32_to_f16;

// The value of a half computed from its definition.
double half_value(uint16_t h) {
    const int sign = (h >> 15) ? -1 : 1;
    const int exp = (h >> 10) & 0x1F;
    const int mant = h & 0x3FF;
    if (exp == 0) return sign * std::ldexp(mant, -24);
    if (exp == 31) return mant ? NAN : sign * INFINITY;
    return sign * std::ldexp(1024 + mant, exp - 25);
}

TEST(F16, EveryHalfWidensExactly) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const double want = half_value(static_cast<uint16_t>(h));
        const float got = f16_to_f32(static_cast<uint16_t>(h));
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got)) << h;
        } else {
            ASSERT_EQ(static_cast<double>(got), want) << h;
            ASSERT_EQ(std::signbit(got), (h >> 15) != 0) << h;
        }
    }
}

TEST(F16, EveryHalfRoundTrips) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const uint16_t back = f32_to_f16(f16_to_f32(static_cast<uint16_t>(h)));
        if (std::isnan(f16_to_f32(static_cast<uint16_t>(h)))) {
            ASSERT_TRUE(std::isnan(f16_to_f32(back))) << h;
        } else {
            ASSERT_EQ(back, h) << h;
        }
    }
}

// f32_to_f16 returns the nearest half, ties to the even one, overflow to infinity.
void expect_nearest(float f) {
    const uint16_t h = f32_to_f16(f);
    const double got = half_value(h), v = f;
    ASSERT_EQ(std::signbit(got), std::signbit(v)) << f;
    if (std::fabs(v) >= 65520.0) {
        ASSERT_TRUE(std::isinf(got)) << f;
        return;
    }
    for (int d : {-1, 1}) {  // neighbours of the result in the same sign
        const uint16_t n = static_cast<uint16_t>(h + d);
        if ((n & 0x7FFF) >= 0x7C00 || (n & 0x8000) != (h & 0x8000)) continue;
        const double e_got = std::fabs(got - v), e_n = std::fabs(half_value(n) - v);
        ASSERT_LE(e_got, e_n) << f;
        if (e_got == e_n) ASSERT_EQ(h & 1, 0) << "tie not to even for " << f;
    }
}

TEST(F16, NarrowingRoundsToNearestEven) {
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) {
        const uint32_t bits = rng();
        float f;
        std::memcpy(&f, &bits, sizeof f);
        if (!std::isfinite(f)) continue;
        const float scaled = std::ldexp(std::fmod(f, 2.0f), static_cast<int>(rng() % 48) - 30);
        expect_nearest(scaled);
    }
    // Exact ties and the edges of the range.
    for (uint32_t h = 0; h < 0x7BFF; ++h) {
        const double mid = (half_value(h) + half_value(h + 1)) / 2;
        expect_nearest(static_cast<float>(mid));
        expect_nearest(static_cast<float>(-mid));
    }
    expect_nearest(65504.0f);
    expect_nearest(65519.99f);
    expect_nearest(65520.0f);
    expect_nearest(1e-8f);
    expect_nearest(2.9802322e-08f);  // exactly half the smallest subnormal: rounds to 0
    EXPECT_EQ(f32_to_f16(INFINITY), 0x7C00);
    EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(NAN))));
}

std::vector<uint16_t> random_halves(size_t n, uint32_t seed) {
    const std::vector<float> f = random_floats(n, seed, -2.0f, 2.0f);
    std::vector<uint16_t> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = f32_to_f16(f[i]);
    return h;
}

std::vector<double> widen(const std::vector<uint16_t>& h) {
    std::vector<double> d(h.size());
    for (size_t i = 0; i < h.size(); ++i) d[i] = half_value(h[i]);
    return d;
}

void check_shape(pk::IsaLevel isa, int64_t M, int64_t N, int64_t K, bool with_bias, uint32_t seed) {
    const std::vector<uint16_t> w = random_halves(static_cast<size_t>(N * K), seed);
    const std::vector<float> x = random_floats(static_cast<size_t>(M * K), seed + 1);
    const std::vector<float> bias = random_floats(static_cast<size_t>(N), seed + 2);
    const PackedWeights pw(WeightType::F16, w.data(), N, K, isa);
    EXPECT_EQ(pw.packed_bytes(), static_cast<size_t>((N + 15) / 16 * 16 * K * 2));
    const float* b = with_bias ? bias.data() : nullptr;
    const std::vector<float> y = run(pw, x, M, b, 1);
    expect_matches_reference(y, std::vector<double>(x.begin(), x.end()), widen(w), b, M, N, K,
                             (static_cast<double>(K) + 8.0) * std::ldexp(1.0, -24));
}

TEST_P(MatmulF16, OddShapesMatchReference) {
    uint32_t seed = 100;
    for (int64_t M : {1, 2, 5, 7, 13, 127}) {
        for (int64_t N : {1, 3, 17, 33}) {
            for (int64_t K : {1, 3, 37, 64}) {
                check_shape(level(), M, N, K, (seed % 2) == 1, seed);
                seed += 3;
            }
        }
    }
    check_shape(level(), 13, 40, 700, true, 7);
    check_shape(level(), 1, 40, 700, true, 8);
}

TEST_P(MatmulF16, SameBitsForAnyTeamSize) {
    struct Shape {
        int64_t M, N, K;
    };
    for (const Shape s : {Shape{127, 300, 256}, Shape{500, 40, 300}, Shape{1, 1030, 640}}) {
        const std::vector<uint16_t> w = random_halves(s.N * s.K, 71);
        const std::vector<float> x = random_floats(s.M * s.K, 72);
        const std::vector<float> bias = random_floats(s.N, 73);
        const PackedWeights pw(WeightType::F16, w.data(), s.N, s.K, level());
        expect_same_bits_for_any_team(pw, x, s.M, bias.data());
    }
}

// F16 weights are widened and run the f32 tile, whose outputs have the same bits at every
// SIMD level (test_kernel_matmul_f32.cpp).
TEST(MatmulF16Levels, SimdLevelsGiveTheSameBits) {
    if (!cpu_runs_two_simd_levels()) GTEST_SKIP() << "this CPU has at most one SIMD level of this build";
    const int64_t M = 13, N = 40, K = 700;
    const std::vector<uint16_t> w = random_halves(N * K, 81);
    const std::vector<float> x = random_floats(M * K, 82), bias = random_floats(N, 83);
    expect_same_bits_at_simd_levels(WeightType::F16, w.data(), N, K, x, M, bias.data(), -1);
}

INSTANTIATE_ISA_LEVELS(MatmulF16);

}  // namespace
