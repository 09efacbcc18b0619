// matmul with Q8_0 weights: the activation quantisation, odd shapes against a double
// reference on the dequantised weights and quantised activations, identical bits for any team
// size, at every ISA level; and the same bits at the SIMD levels of one architecture (avx2 and
// avx512; neon, dotprod and i8mm).
#include "test_kernel_matmul_common.h"

#include <stdexcept>

#include "kernels/f16.h"
#include "kernels/kernel_table.h"

namespace {

using namespace matmul_test;
using pk::kernels::f16_to_f32;
using pk::kernels::f32_to_f16;

class MatmulQ8_0 : public isa_test::LevelTest {};

// Raw GGUF Q8_0 rows (34-byte blocks) with random scales and quants, including -128, which
// GGUF allows even though quantisers do not produce it.
struct Q8Weights {
    std::vector<uint8_t> raw;
    std::vector<double> dequantised;  // [N][K]
};

Q8Weights random_q8(int64_t N, int64_t K, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> scale(0.001f, 0.02f);
    std::uniform_int_distribution<int> quant(-128, 127);
    Q8Weights w;
    w.raw.resize(static_cast<size_t>(N * K / 32 * 34));
    w.dequantised.resize(static_cast<size_t>(N * K));
    uint8_t* p = w.raw.data();
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t b = 0; b < K / 32; ++b) {
            const uint16_t d = f32_to_f16(scale(rng) * ((rng() & 1) ? 1.0f : -1.0f));
            std::memcpy(p, &d, 2);
            for (int i = 0; i < 32; ++i) {
                const int8_t q = static_cast<int8_t>(quant(rng));
                p[2 + i] = static_cast<uint8_t>(q);
                w.dequantised[n * K + b * 32 + i] = static_cast<double>(f16_to_f32(d)) * q;
            }
            p += 34;
        }
    }
    return w;
}

// The documented activation quantisation, written out independently: per block of 32,
// d = max|x| / 127, q = round-half-even(x * (127 / max|x|)); returns d * q.
std::vector<double> quantise_activations(const std::vector<float>& x, int64_t K) {
    std::vector<double> out(x.size());
    for (size_t b0 = 0; b0 < x.size(); b0 += 32) {
        float amax = 0.0f;
        for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b0 + i]));
        const float d = amax / 127.0f, id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (size_t i = 0; i < 32; ++i) {
            out[b0 + i] = static_cast<double>(d) * std::nearbyint(x[b0 + i] * id);
        }
    }
    (void)K;
    return out;
}

void check_shape(pk::IsaLevel isa, int64_t M, int64_t N, int64_t K, bool with_bias, uint32_t seed) {
    const Q8Weights w = random_q8(N, K, seed);
    const std::vector<float> x = random_floats(static_cast<size_t>(M * K), seed + 1, -3.0f, 3.0f);
    const std::vector<float> bias = random_floats(static_cast<size_t>(N), seed + 2);
    const PackedWeights pw(WeightType::Q8_0, w.raw.data(), N, K, isa);
    const float* b = with_bias ? bias.data() : nullptr;
    const std::vector<float> y = run(pw, x, M, b, 1);
    // The integer block sums are exact; what is left is float rounding of one scaled term per
    // block and their sum.
    const double tol = (static_cast<double>(K) / 32.0 + 8.0) * std::ldexp(1.0, -23);
    expect_matches_reference(y, quantise_activations(x, K), w.dequantised, b, M, N, K, tol);
}

TEST_P(MatmulQ8_0, OddShapesMatchReference) {
    uint32_t seed = 200;
    for (int64_t M : {1, 2, 5, 7, 13, 127}) {
        for (int64_t N : {1, 3, 17, 33}) {
            for (int64_t K : {32, 64, 96}) {
                check_shape(level(), M, N, K, (seed % 2) == 0, seed);
                seed += 3;
            }
        }
    }
    // More blocks than one K slice of the kernel, with a partial last slice.
    check_shape(level(), 13, 40, 1056, true, 9);
    check_shape(level(), 1, 40, 1056, true, 10);
}

TEST_P(MatmulQ8_0, CloseToTheUnquantisedProduct) {
    // Sanity of the scheme itself: 8-bit weights and activations stay within about 1 % of the
    // float product of the dequantised weights with the original activations.
    const int64_t M = 5, N = 17, K = 512;
    const Q8Weights w = random_q8(N, K, 81);
    const std::vector<float> x = random_floats(M * K, 82);
    const PackedWeights pw(WeightType::Q8_0, w.raw.data(), N, K, level());
    const std::vector<float> y = run(pw, x, M, nullptr, 1);
    double err = 0.0, norm = 0.0;
    for (int64_t m = 0; m < M; ++m) {
        for (int64_t n = 0; n < N; ++n) {
            double ref = 0.0;
            for (int64_t k = 0; k < K; ++k) ref += x[m * K + k] * w.dequantised[n * K + k];
            err += (y[m * N + n] - ref) * (y[m * N + n] - ref);
            norm += ref * ref;
        }
    }
    EXPECT_LT(std::sqrt(err / norm), 0.01);
}

TEST_P(MatmulQ8_0, ZeroBlocksAndExtremes) {
    // An all-zero activation block (scale 0) and blocks whose largest magnitude is negative.
    const int64_t M = 3, N = 5, K = 96;
    const Q8Weights w = random_q8(N, K, 91);
    std::vector<float> x = random_floats(M * K, 92);
    std::fill(x.begin() + 32, x.begin() + 64, 0.0f);
    x[K + 5] = -40.0f;
    x[2 * K + 70] = 1e-30f;
    const PackedWeights pw(WeightType::Q8_0, w.raw.data(), N, K, level());
    const std::vector<float> y = run(pw, x, M, nullptr, 1);
    expect_matches_reference(y, quantise_activations(x, K), w.dequantised, nullptr, M, N, K,
                             20.0 * std::ldexp(1.0, -23));
}

TEST_P(MatmulQ8_0, QuantisationIsTheSameOnEveryPath) {
    namespace md = pk::kernels::matmul_detail;
    const int64_t K = 352;  // 11 blocks: a group of 8 and a partial one
    std::vector<float> x = random_floats(K, 101, -5.0f, 5.0f);
    std::fill(x.begin() + 64, x.begin() + 96, 0.0f);
    const std::vector<double> want = quantise_activations(x, K);
    {
        const md::MatmulKernels* k = &kernels().matmul;
        std::vector<int16_t> q(static_cast<size_t>(K));
        std::vector<float> s(static_cast<size_t>(K / 32));
        k->quantize_row_q8(x.data(), K, q.data(), s.data());
        for (int64_t i = 0; i < K; ++i) {
            ASSERT_EQ(static_cast<double>(s[i / 32]) * q[i], want[i]) << "k=" << i;
        }
        // Row panels: rows interleaved pair by pair, missing rows zero.
        const int64_t R = md::kRowsQ8;
        for (int64_t rows = 1; rows <= R; ++rows) {
            std::vector<float> xs = random_floats(static_cast<size_t>(rows * K), 102 + rows);
            const std::vector<double> wants = quantise_activations(xs, K);
            std::vector<int16_t> qp(static_cast<size_t>(R * K), 99);
            std::vector<float> sp(static_cast<size_t>(R * K / 32), 99.0f);
            k->quantize_panel_q8(xs.data(), rows, K, K / 32, qp.data(), sp.data());
            for (int64_t r = 0; r < R; ++r) {
                for (int64_t i = 0; i < K; ++i) {
                    const double got = static_cast<double>(sp[(i / 32) * R + r]) *
                                       qp[2 * ((i / 2) * R + r) + i % 2];
                    ASSERT_EQ(got, r < rows ? wants[r * K + i] : 0.0)
                        << "row " << r << " of " << rows << ", k=" << i;
                }
            }
        }
    }
}

// The levels of this build with the VNNI slots and activation layout (avx512; dotprod, i8mm)
// that this CPU has.
std::vector<pk::IsaLevel> quad_levels() {
    std::vector<pk::IsaLevel> levels;
    for (pk::IsaLevel l : isa_test::all_levels()) {
        if (pk::kernels::matmul_detail::q8_uses_quads(l) && pk::cpu_features().supports(l)) levels.push_back(l);
    }
    return levels;
}

TEST(MatmulQ8_0Levels, VnniQuantisationMatchesTheDocumentedOne) {
    namespace md = pk::kernels::matmul_detail;
    if (quad_levels().empty()) GTEST_SKIP() << "this CPU has no level with the quad layout";
    for (pk::IsaLevel level : quad_levels()) {
        SCOPED_TRACE(pk::isa_level_name(level));
        const md::MatmulKernels& k = pk::kernels::kernel_table(level).matmul;
        const int64_t K = 352, R = md::kRowsQ8Vnni;
        for (int64_t rows = 1; rows <= R; rows += 3) {
            std::vector<float> x = random_floats(static_cast<size_t>(rows * K), 131 + rows, -5.0f, 5.0f);
            std::fill(x.begin() + 64, x.begin() + 96, 0.0f);
            const std::vector<double> want = quantise_activations(x, K);
            std::vector<int8_t> q(static_cast<size_t>(R * K), 99);
            std::vector<float> s(static_cast<size_t>(R * K / 32), 99.0f);
            std::vector<int32_t> corr(static_cast<size_t>(R * K / 32), 99);
            k.quantize_q8_vnni(x.data(), rows, K, K / 32, R, q.data(), s.data(), corr.data());
            for (int64_t r = 0; r < R; ++r) {
                for (int64_t b = 0; b < K / 32; ++b) {
                    int32_t sum = 0;
                    for (int64_t i = 0; i < 32; ++i) {
                        const int8_t qi = q[(b * R + r) * 32 + i];
                        sum += qi;
                        const double got = static_cast<double>(s[b * R + r]) * qi;
                        ASSERT_EQ(got, r < rows ? want[r * K + b * 32 + i] : 0.0)
                            << "row " << r << " of " << rows << ", k=" << b * 32 + i;
                    }
                    ASSERT_EQ(corr[b * R + r], -128 * sum) << "row " << r << ", block " << b;
                }
            }
        }
    }
}

// The integer block sums are exact and the SIMD levels of one architecture scale and add them
// in the same order, so weights packed for avx2 and for avx512 (neon and dotprod, i8mm: the
// pair and the quad layouts) give identical bits: GEMM tiles with partial row and column
// panels, pairs of panels and single ones (avx512), K slices with a partial last one,
// matrix-vector rows, bias, ldy > N.
TEST(MatmulQ8_0Levels, SimdLevelsGiveTheSameBits) {
    if (!cpu_runs_two_simd_levels()) GTEST_SKIP() << "this CPU has at most one SIMD level of this build";
    struct Shape {
        int64_t M, N, K;
    };
    std::vector<Shape> shapes;
    for (int64_t M : {1, 2, 4, 5, 9, 13, 127}) {
        for (int64_t N : {1, 17, 33, 48}) {
            for (int64_t K : {32, 96, 544}) shapes.push_back({M, N, K});
        }
    }
    for (const Shape s : {Shape{125, 640, 1024}, Shape{500, 96, 2048}, Shape{1, 1030, 640},
                          Shape{3, 4096, 1024}}) {
        shapes.push_back(s);
    }
    uint32_t seed = 300;
    for (const Shape s : shapes) {
        const Q8Weights w = random_q8(s.N, s.K, seed);
        const std::vector<float> x = random_floats(s.M * s.K, seed + 1, -3.0f, 3.0f);
        const std::vector<float> bias = random_floats(s.N, seed + 2);
        const float* b = seed % 2 ? bias.data() : nullptr;
        const int64_t ldy = s.N + static_cast<int64_t>(seed % 3);
        expect_same_bits_at_simd_levels(WeightType::Q8_0, w.raw.data(), s.N, s.K, x, s.M, b, ldy);
        seed += 3;
    }
}

// The i8mm level's weights are in the documented pair order (matmul_layout.h): signed q, the
// 8 k of outputs 2 p and 2 p + 1 side by side, padding rows zero; the scales as elsewhere.
TEST(MatmulQ8_0Levels, I8mmPacksThePairOrder) {
    namespace md = pk::kernels::matmul_detail;
    if (!pk::cpu_features().supports(pk::IsaLevel::I8mm)) GTEST_SKIP() << "this CPU has no i8mm level";
    const int64_t N = 21, K = 96;
    const Q8Weights w = random_q8(N, K, 151);
    const PackedWeights pw(WeightType::Q8_0, w.raw.data(), N, K, pk::IsaLevel::I8mm);
    for (int64_t p = 0; p < 2; ++p) {
        for (int64_t b = 0; b < K / 32; ++b) {
            const uint8_t* blk = pw.panel(p) + b * md::kQ8PanelBlockBytes;
            const auto* q = reinterpret_cast<const int8_t*>(blk + md::kPanel * sizeof(float));
            for (int64_t j = 0; j < md::kPanel; ++j) {
                const int64_t row = 16 * p + j;
                const uint8_t* src = w.raw.data() + (row * (K / 32) + b) * 34;
                float scale;
                std::memcpy(&scale, blk + j * sizeof(float), sizeof scale);
                uint16_t d = 0;
                if (row < N) std::memcpy(&d, src, 2);
                ASSERT_EQ(scale, row < N ? f16_to_f32(d) : 0.0f) << "row " << row << ", block " << b;
                for (int64_t i = 0; i < 32; ++i) {
                    const int8_t want = row < N ? static_cast<int8_t>(src[2 + i]) : 0;
                    ASSERT_EQ(q[(i / 8) * 128 + 16 * (j / 2) + 8 * (j % 2) + i % 8], want)
                        << "row " << row << ", k=" << b * 32 + i;
                }
            }
        }
    }
}

TEST(MatmulQ8_0Levels, PackingAboveTheCpusLevelThrows) {
    const pk::IsaLevel top = isa_test::all_levels().back();
    if (pk::cpu_features().supports(top)) GTEST_SKIP() << "this CPU has every level";
    const Q8Weights w = random_q8(17, 64, 141);
    EXPECT_THROW(PackedWeights(WeightType::Q8_0, w.raw.data(), 17, 64, top), std::invalid_argument);
}

TEST_P(MatmulQ8_0, SameBitsForAnyTeamSize) {
    struct Shape {
        int64_t M, N, K;
    };
    for (const Shape s : {Shape{127, 300, 256}, Shape{500, 40, 320}, Shape{1, 1030, 640},
                          Shape{2, 2560, 640}}) {
        const Q8Weights w = random_q8(s.N, s.K, 111);
        const std::vector<float> x = random_floats(s.M * s.K, 112);
        const std::vector<float> bias = random_floats(s.N, 113);
        const PackedWeights pw(WeightType::Q8_0, w.raw.data(), s.N, s.K, level());
        expect_same_bits_for_any_team(pw, x, s.M, bias.data());
    }
}

TEST_P(MatmulQ8_0, PackedSizeAndChecks) {
    const Q8Weights w = random_q8(17, 64, 121);
    const PackedWeights pw(WeightType::Q8_0, w.raw.data(), 17, 64, level());
    EXPECT_EQ(pw.packed_bytes(), 2u * 2u * 576u);  // 2 panels x 2 blocks x (16 scales + 512 q)
    EXPECT_EQ(pk::kernels::weight_row_bytes(WeightType::Q8_0, 64), 68u);
    EXPECT_THROW(PackedWeights(WeightType::Q8_0, w.raw.data(), 17, 48, level()), std::invalid_argument);
}

INSTANTIATE_ISA_LEVELS(MatmulQ8_0);

}  // namespace
