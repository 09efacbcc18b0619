// matmul with F32 weights: odd shapes against a double reference, bias, output stride,
// identical bits for any team size, argument checks; at every ISA level; and the AVX-512
// tile's bits against the AVX2 one's.
#include "test_kernel_matmul_common.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/f16.h"

namespace {

using namespace matmul_test;

class MatmulF32 : public isa_test::LevelTest {};

// Float rounding bound for a K-term sum (plus the bias and the K-slice partial sums).
double f32_tolerance(int64_t K) { return (static_cast<double>(K) + 8.0) * std::ldexp(1.0, -24); }

void check_shape(pk::IsaLevel isa, int64_t M, int64_t N, int64_t K, bool with_bias, uint32_t seed) {
    const std::vector<float> w = random_floats(static_cast<size_t>(N * K), seed);
    const std::vector<float> x = random_floats(static_cast<size_t>(M * K), seed + 1);
    const std::vector<float> bias = random_floats(static_cast<size_t>(N), seed + 2);
    const PackedWeights pw(WeightType::F32, w.data(), N, K, isa);
    const float* b = with_bias ? bias.data() : nullptr;
    const std::vector<float> y = run(pw, x, M, b, 1);
    expect_matches_reference(y, std::vector<double>(x.begin(), x.end()),
                             std::vector<double>(w.begin(), w.end()), b, M, N, K,
                             f32_tolerance(K));
}

TEST_P(MatmulF32, OddShapesMatchReference) {
    uint32_t seed = 1;
    for (int64_t M : {1, 2, 5, 7, 13, 127}) {
        for (int64_t N : {1, 3, 17, 33}) {
            for (int64_t K : {1, 3, 37, 64}) {
                check_shape(level(), M, N, K, (seed % 2) == 0, seed);
                seed += 3;
            }
        }
    }
}

TEST_P(MatmulF32, LongKIsSlicedCorrectly) {
    // K larger than the kernel's K slice, with a partial last slice.
    check_shape(level(), 13, 40, 700, true, 11);
    check_shape(level(), 1, 40, 700, true, 12);
    check_shape(level(), 8, 16, 512, false, 13);
}

TEST_P(MatmulF32, EncoderLikeShape) { check_shape(level(), 127, 300, 256, true, 21); }

TEST_P(MatmulF32, OutputRowStride) {
    const int64_t M = 7, N = 19, K = 45, ldy = 24;
    const std::vector<float> w = random_floats(N * K, 31), x = random_floats(M * K, 32);
    const std::vector<float> bias = random_floats(N, 33);
    const PackedWeights pw(WeightType::F32, w.data(), N, K, level());
    for (int threads : {1, 3}) {
        const std::vector<float> y = run(pw, x, M, bias.data(), threads, ldy);
        expect_matches_reference(y, std::vector<double>(x.begin(), x.end()),
                                 std::vector<double>(w.begin(), w.end()), bias.data(), M, N, K,
                                 f32_tolerance(K), ldy);
    }
}

TEST_P(MatmulF32, SameBitsForAnyTeamSize) {
    struct Shape {
        int64_t M, N, K;
    };
    // Big enough to be split (GEMM by rows and by columns, and the matrix-vector product).
    for (const Shape s : {Shape{127, 300, 256}, Shape{500, 40, 300}, Shape{13, 1030, 640},
                          Shape{1, 1030, 640}, Shape{1, 2560, 64}}) {
        const std::vector<float> w = random_floats(s.N * s.K, 41);
        const std::vector<float> x = random_floats(s.M * s.K, 42);
        const std::vector<float> bias = random_floats(s.N, 43);
        const PackedWeights pw(WeightType::F32, w.data(), s.N, s.K, level());
        expect_same_bits_for_any_team(pw, x, s.M, bias.data());
        expect_same_bits_for_any_team(pw, x, s.M, nullptr);
    }
}

// Each output is the same chain of FMAs over k at every SIMD level (the avx512 tile is the
// avx2 one with a zmm per row, or two panels at once), so the levels give identical bits:
// partial row and column panels, pairs of panels and single ones, K slices with a partial
// last one, panels read in place and copied, bias, ldy > N.
TEST(MatmulF32Levels, SimdLevelsGiveTheSameBits) {
    if (!cpu_runs_two_simd_levels()) GTEST_SKIP() << "this CPU has at most one SIMD level of this build";
    uint32_t seed = 600;
    for (int64_t M : {2, 5, 6, 7, 13, 127}) {
        for (int64_t N : {17, 48}) {
            for (int64_t K : {37, 256, 700}) {
                const std::vector<float> w = random_floats(N * K, seed), x = random_floats(M * K, seed + 1);
                const std::vector<float> bias = random_floats(N, seed + 2);
                const int64_t ldy = N + static_cast<int64_t>(seed % 3);
                expect_same_bits_at_simd_levels(WeightType::F32, w.data(), N, K, x, M,
                                                seed % 2 ? bias.data() : nullptr, ldy);
                seed += 3;
            }
        }
    }
}

TEST_P(MatmulF32, RowsDoNotDependOnTheirNeighbours) {
    // A row's result does not depend on the other rows of the batch or on where its tile
    // falls (here: a batch of 9 against the row placed at the end of a batch of 13 zeros), and
    // a few rows give exactly the single-row result.
    const int64_t N = 33, K = 300, M = 9;
    const std::vector<float> w = random_floats(N * K, 51), x = random_floats(M * K, 52);
    const PackedWeights pw(WeightType::F32, w.data(), N, K, level());
    const std::vector<float> all = run(pw, x, M, nullptr, 2);
    for (int64_t m = 0; m < M; ++m) {
        std::vector<float> batch(13 * K, 0.0f);
        std::copy(x.begin() + m * K, x.begin() + (m + 1) * K, batch.begin() + 12 * K);
        const std::vector<float> alone = run(pw, batch, 13, nullptr, 1);
        EXPECT_EQ(0, std::memcmp(alone.data() + 12 * N, all.data() + m * N, N * sizeof(float)))
            << m;
    }
    const std::vector<float> few = run(pw, x, 3, nullptr, 2);
    for (int64_t m = 0; m < 3; ++m) {
        const std::vector<float> row(x.begin() + m * K, x.begin() + (m + 1) * K);
        const std::vector<float> one = run(pw, row, 1, nullptr, 1);
        EXPECT_EQ(0, std::memcmp(one.data(), few.data() + m * N, N * sizeof(float))) << m;
    }
}

TEST_P(MatmulF32, PackedSizeAndChecks) {
    const std::vector<float> w = random_floats(17 * 5, 61);
    const PackedWeights pw(WeightType::F32, w.data(), 17, 5, level());
    EXPECT_EQ(pw.n(), 17);
    EXPECT_EQ(pw.k(), 5);
    EXPECT_EQ(pw.packed_bytes(), 2u * 16u * 5u * sizeof(float));  // two 16-wide panels
    EXPECT_THROW(PackedWeights(WeightType::F32, w.data(), 0, 5, level()), std::invalid_argument);
    EXPECT_THROW(PackedWeights(WeightType::F32, nullptr, 17, 5, level()), std::invalid_argument);

    pk::Arena arena;
    std::vector<float> x(2 * 6), y(2 * 17);
    EXPECT_THROW(pk::kernels::matmul(team(1), arena, x.data(), 2, 6, pw, nullptr, y.data()),
                 std::invalid_argument);
    EXPECT_THROW(pk::kernels::matmul(team(1), arena, x.data(), 2, 5, pw, nullptr, y.data(), 16),
                 std::invalid_argument);
    // M == 0 is a no-op.
    pk::kernels::matmul(team(1), arena, x.data(), 0, 5, pw, nullptr, y.data());
}

INSTANTIATE_ISA_LEVELS(MatmulF32);

#if defined(PARAKEET_HAVE_X86)
// The avx512 matrix-vector kernel sums like the avx2 one, so a row gets the same bits at both
// levels (K with and without a tail of k < 4, N with a partial panel).
TEST(MatmulF32Avx512, MatvecGivesTheAvx2Bits) {
    const std::string why = isa_test::missing_reason({pk::IsaLevel::Avx2, pk::IsaLevel::Avx512});
    if (!why.empty()) GTEST_SKIP() << why;
    ASSERT_NE(pk::kernels::kernel_table(pk::IsaLevel::Avx512).matmul.matvec_f32,
              pk::kernels::kernel_table(pk::IsaLevel::Avx2).matmul.matvec_f32)
        << "the avx512 level has its own kernel";
    for (const auto& [N, K] : {std::pair<int64_t, int64_t>{2560, 640}, {37, 303}, {16, 1}}) {
        const std::vector<float> w = random_floats(N * K, 61), x = random_floats(5 * K, 62), b = random_floats(N, 63);
        std::vector<float> y[2];
        for (int i = 0; i < 2; ++i) {
            const PackedWeights pw(WeightType::F32, w.data(), N, K, i == 0 ? pk::IsaLevel::Avx2 : pk::IsaLevel::Avx512);
            y[i] = run(pw, x, 5, b.data(), 1, -1, pk::kernels::MatmulPath::Matvec);
        }
        EXPECT_EQ(0, std::memcmp(y[0].data(), y[1].data(), y[0].size() * sizeof(float))) << "N " << N << " K " << K;
    }
}
#endif

}  // namespace

namespace {

// Wider shapes than SimdLevelsGiveTheSameBits (many panels, K = 3, a 1030-wide N), F16 too: the
// same check, the same helper.
TEST(MatmulF32Levels, WideShapesGiveTheSameBitsAtEveryLevel) {
    if (!cpu_runs_two_simd_levels()) GTEST_SKIP() << "this CPU has at most one SIMD level of this build";
    struct Shape {
        int64_t M, N, K;
    };
    for (const Shape s : {Shape{127, 300, 256}, Shape{7, 33, 700}, Shape{5, 17, 3}, Shape{13, 1030, 640}}) {
        const std::vector<float> w = random_floats(s.N * s.K, 61), x = random_floats(s.M * s.K, 62);
        const std::vector<float> bias = random_floats(s.N, 63);
        std::vector<uint16_t> halves;
        for (float v : w) halves.push_back(pk::kernels::f32_to_f16(v));
        expect_same_bits_at_simd_levels(WeightType::F32, w.data(), s.N, s.K, x, s.M, bias.data(), -1);
        expect_same_bits_at_simd_levels(WeightType::F16, halves.data(), s.N, s.K, x, s.M, bias.data(), -1);
    }
}

}  // namespace
