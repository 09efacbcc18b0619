// The opt-in BF16 matmul (kernels/bf16.h, PackedWeights::to_bf16, vdpbf16ps kernels): the
// rounding, odd shapes against a double reference computed on the bf16-rounded operands,
// K slicing, F16 sources, output stride, identical bits for any team size, at the levels that
// run BF16 (avx512 with AVX512_BF16); at the others, that BF16 weights are refused with a
// clear error instead.
#include "test_kernel_matmul_common.h"

#include <stdexcept>
#include <string>

#include "kernels/bf16.h"
#include "kernels/f16.h"

namespace {

using namespace matmul_test;
using pk::kernels::bf16_to_f32;
using pk::kernels::f32_to_bf16;

// The float a bf16 stands for, from its definition.
double bf16_value(uint16_t h) {
    const int sign = (h >> 15) ? -1 : 1;
    const int exp = (h >> 7) & 0xFF;
    const int mant = h & 0x7F;
    if (exp == 0) return sign * std::ldexp(mant, -133);
    if (exp == 255) return mant ? NAN : sign * INFINITY;
    return sign * std::ldexp(128 + mant, exp - 134);
}

TEST(Bf16, EveryBf16WidensExactly) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const double want = bf16_value(static_cast<uint16_t>(h));
        const float got = bf16_to_f32(static_cast<uint16_t>(h));
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got)) << h;
        } else {
            ASSERT_EQ(static_cast<double>(got), want) << h;
        }
    }
}

TEST(Bf16, NarrowingRoundsToNearestEven) {
    std::mt19937 rng(5);
    for (int i = 0; i < 300000; ++i) {
        const uint32_t bits = rng();
        float f;
        std::memcpy(&f, &bits, sizeof f);
        if (!std::isfinite(f)) continue;
        const uint16_t h = f32_to_bf16(f);
        const double got = bf16_value(h), v = f;
        if (std::isinf(got)) {  // only past the largest bf16, half an ulp included
            ASSERT_GE(std::fabs(v), bf16_value(0x7F7F)) << f;
            continue;
        }
        for (int d : {-1, 1}) {
            const uint16_t n = static_cast<uint16_t>(h + d);
            if ((n & 0x7FFF) >= 0x7F80 || (n & 0x8000) != (h & 0x8000)) continue;
            const double e_got = std::fabs(got - v), e_n = std::fabs(bf16_value(n) - v);
            ASSERT_LE(e_got, e_n) << f;
            if (e_got == e_n) ASSERT_EQ(h & 1, 0) << "tie not to even for " << f;
        }
    }
    EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);  // tie, down to even
    EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie, up to even
    EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
}

// Rounds through bf16 and back, as the kernels see the operands.
std::vector<double> as_bf16(const std::vector<float>& v) {
    std::vector<double> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = bf16_to_f32(f32_to_bf16(v[i]));
    return out;
}

// Products of bf16 are exact in f32; what is left is the f32 rounding of the sum.
double bf16_tolerance(int64_t K) { return (static_cast<double>(K) + 8.0) * std::ldexp(1.0, -24); }

class MatmulBf16 : public isa_test::LevelTest {
protected:
    void SetUp() override {
        LevelTest::SetUp();
        if (IsSkipped()) return;
        if (!PackedWeights::bf16_available(level())) {
            GTEST_SKIP() << "BF16 weights need AVX512_BF16 at the avx512 level (this level: "
                         << pk::isa_level_name(level())
                         << (pk::cpu_features().avx512bf16 ? "" : ", CPU without AVX512_BF16")
                         << "); MatmulBf16Unavailable checks the refusal";
        }
    }
};

class MatmulBf16Unavailable : public isa_test::LevelTest {};

void check_shape(pk::IsaLevel isa, int64_t M, int64_t N, int64_t K, bool with_bias, uint32_t seed) {
    const std::vector<float> w = random_floats(static_cast<size_t>(N * K), seed);
    const std::vector<float> x = random_floats(static_cast<size_t>(M * K), seed + 1);
    const std::vector<float> bias = random_floats(static_cast<size_t>(N), seed + 2);
    const PackedWeights pw = PackedWeights::to_bf16(WeightType::F32, w.data(), N, K, isa);
    ASSERT_EQ(pw.type(), WeightType::BF16);
    const float* b = with_bias ? bias.data() : nullptr;
    const std::vector<float> y = run(pw, x, M, b, 1);
    expect_matches_reference(y, as_bf16(x), as_bf16(w), b, M, N, K, bf16_tolerance(K));
}

TEST_P(MatmulBf16, OddShapesMatchReference) {
    uint32_t seed = 1;
    for (int64_t M : {1, 2, 4, 5, 7, 8, 9, 13, 127}) {
        for (int64_t N : {1, 3, 16, 17, 33}) {
            for (int64_t K : {1, 2, 3, 37, 64}) {
                check_shape(level(), M, N, K, (seed % 2) == 0, seed);
                seed += 3;
            }
        }
    }
}

TEST_P(MatmulBf16, LongKIsSlicedCorrectly) {
    // K beyond the 512-k slice, with partial last slices, odd and even.
    check_shape(level(), 13, 40, 1100, true, 11);
    check_shape(level(), 1, 40, 1101, true, 12);
    check_shape(level(), 16, 16, 512, false, 13);
    check_shape(level(), 130, 48, 1537, false, 14);
}

TEST_P(MatmulBf16, EncoderLikeShape) { check_shape(level(), 125, 512, 2048, true, 21); }

TEST_P(MatmulBf16, F16SourceIsWidenedThenRounded) {
    const int64_t M = 9, N = 21, K = 77;
    std::vector<float> w = random_floats(static_cast<size_t>(N * K), 41);
    std::vector<uint16_t> h(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
        h[i] = pk::kernels::f32_to_f16(w[i]);
        w[i] = pk::kernels::f16_to_f32(h[i]);
    }
    const std::vector<float> x = random_floats(static_cast<size_t>(M * K), 42);
    const PackedWeights pw = PackedWeights::to_bf16(WeightType::F16, h.data(), N, K, level());
    expect_matches_reference(run(pw, x, M, nullptr, 2), as_bf16(x), as_bf16(w), nullptr, M, N, K,
                             bf16_tolerance(K));
}

TEST_P(MatmulBf16, OutputRowStride) {
    const int64_t M = 11, N = 19, K = 45, ldy = 24;
    const std::vector<float> w = random_floats(N * K, 31), x = random_floats(M * K, 32);
    const std::vector<float> bias = random_floats(N, 33);
    const PackedWeights pw = PackedWeights::to_bf16(WeightType::F32, w.data(), N, K, level());
    for (int threads : {1, 3}) {
        expect_matches_reference(run(pw, x, M, bias.data(), threads, ldy), as_bf16(x), as_bf16(w),
                                 bias.data(), M, N, K, bf16_tolerance(K), ldy);
    }
}

TEST_P(MatmulBf16, SameBitsForAnyTeamSize) {
    for (int64_t M : {3, 8, 127, 260}) {
        const int64_t N = 300, K = 1030;
        const std::vector<float> w = random_floats(N * K, 51), x = random_floats(M * K, 52);
        const std::vector<float> bias = random_floats(N, 53);
        const PackedWeights pw = PackedWeights::to_bf16(WeightType::F32, w.data(), N, K, level());
        expect_same_bits_for_any_team(pw, x, M, bias.data());
    }
}

TEST_P(MatmulBf16, RejectsOtherSources) {
    const std::vector<uint8_t> q(34 * 4, 0);
    EXPECT_THROW(PackedWeights::to_bf16(WeightType::Q8_0, q.data(), 4, 32, level()), std::invalid_argument);
    EXPECT_THROW(PackedWeights::to_bf16(WeightType::BF16, q.data(), 4, 32, level()), std::invalid_argument);
    EXPECT_THROW(PackedWeights::to_bf16(WeightType::F32, nullptr, 4, 32, level()), std::invalid_argument);
}

// Where BF16 cannot run, packing it fails loudly (never a silent f32 fallback).
TEST_P(MatmulBf16Unavailable, PackingIsRefused) {
    if (PackedWeights::bf16_available(level())) GTEST_SKIP() << "this level runs BF16: MatmulBf16 covers it";
    const std::vector<float> w(64, 1.0f);
    try {
        PackedWeights::to_bf16(WeightType::F32, w.data(), 2, 32, level());
        FAIL() << "to_bf16 must throw without AVX512_BF16";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("AVX512_BF16"), std::string::npos) << e.what();
    }
}

INSTANTIATE_ISA_LEVELS(MatmulBf16);
INSTANTIATE_ISA_LEVELS(MatmulBf16Unavailable);

}  // namespace
