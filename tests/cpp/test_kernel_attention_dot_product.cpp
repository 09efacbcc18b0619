// Scaled dot-product attention (the ViT's: no mask, no positions) against a double-precision
// reference of softmax(q kᵀ * scale) v per head, on operands strided as a fused qkv buffer,
// and bitwise identical across team sizes, at every ISA level; its bf16 products against the
// same reference of bf16-rounded operands, where the level runs them.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "isa_levels.h"
#include "kernels/attention_dot_product.h"
#include "kernels/bf16.h"

namespace {

class DotProductAttention : public isa_test::LevelTest {};

// A fused [T, 3 * H * dk] qkv buffer (q, k, v side by side, as a ViT's qkv projection writes
// them) of normal values.
std::vector<float> random_qkv(int64_t T, int64_t H, int64_t dk, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(T * 3 * H * dk));
    for (auto& x : v) x = d(rng);
    return v;
}

// The buffer's values rounded to bfloat16 (what the bf16 products multiply).
std::vector<float> rounded_to_bf16(std::vector<float> x) {
    for (auto& v : x) v = pk::kernels::bf16_to_f32(pk::kernels::f32_to_bf16(v));
    return x;
}

std::vector<double> reference(const std::vector<float>& qkv, int64_t T, int64_t H, int64_t dk, double scale) {
    const int64_t D = H * dk, ld = 3 * D;
    std::vector<double> out(static_cast<size_t>(T * D));
    for (int64_t h = 0; h < H; ++h) {
        for (int64_t i = 0; i < T; ++i) {
            std::vector<double> p(static_cast<size_t>(T));
            double mx = -1e300, sum = 0;
            for (int64_t j = 0; j < T; ++j) {
                double s = 0;
                for (int64_t c = 0; c < dk; ++c) s += double(qkv[i * ld + h * dk + c]) * qkv[j * ld + D + h * dk + c];
                p[j] = s * scale;
                mx = std::max(mx, p[j]);
            }
            for (auto& x : p) sum += (x = std::exp(x - mx));
            for (int64_t c = 0; c < dk; ++c) {
                double o = 0;
                for (int64_t j = 0; j < T; ++j) o += p[j] / sum * qkv[j * ld + 2 * D + h * dk + c];
                out[i * D + h * dk + c] = o;
            }
        }
    }
    return out;
}

// The attention of the fused buffer into rows of ldo floats (the columns past H * dk hold a
// marker the kernel must leave alone).
std::vector<float> run(const pk::kernels::KernelTable& kt, const std::vector<float>& qkv, int64_t T, int64_t H,
                       int64_t dk, int64_t ldo, int threads,
                       pk::kernels::AttentionProducts products = pk::kernels::AttentionProducts::F32) {
    pk::ThreadTeam team(threads);
    pk::Arena arena;
    const int64_t D = H * dk;
    std::vector<float> out(static_cast<size_t>(T * ldo), -7.0f);
    pk::kernels::dot_product_attention(kt, team, arena, qkv.data(), qkv.data() + D, qkv.data() + 2 * D, 3 * D, T, H,
                                       dk, 1.0f / std::sqrt(static_cast<float>(dk)), out.data(), ldo, products);
    EXPECT_EQ(arena.used_bytes(), 0u);  // scratch given back
    return out;
}

TEST_P(DotProductAttention, MatchesDoublePrecisionSoftmaxAttention) {
    // T = 248 is CED's 10 s chunk (4 mel x 62 time patches), dk 64 its heads'; the others
    // cover single rows, partial row blocks and partial column tiles.
    for (auto [T, H, dk] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {2, 1, 3}, {17, 3, 5}, {49, 2, 16}, {248, 2, 64}}) {
        const std::vector<float> qkv = random_qkv(T, H, dk, static_cast<unsigned>(T * 31 + dk));
        const int64_t D = H * dk, ldo = D + 3;
        const auto got = run(kernels(), qkv, T, H, dk, ldo, 2);
        const auto want = reference(qkv, T, H, dk, 1.0 / std::sqrt(double(dk)));
        for (int64_t i = 0; i < T; ++i) {
            for (int64_t c = 0; c < D; ++c)
                ASSERT_NEAR(got[i * ldo + c], want[i * D + c], 1e-4 * (1 + std::fabs(want[i * D + c])))
                    << "T=" << T << " row " << i << " column " << c;
            for (int64_t c = D; c < ldo; ++c) ASSERT_EQ(got[i * ldo + c], -7.0f) << "T=" << T << " wrote past H*dk";
        }
    }
}

TEST_P(DotProductAttention, BitwiseIdenticalAcrossTeamSizes) {
    const int64_t T = 75, H = 5, dk = 24;
    const std::vector<float> qkv = random_qkv(T, H, dk, 7);
    const auto one = run(kernels(), qkv, T, H, dk, H * dk, 1);
    for (int threads : {2, 3, 4}) {
        const auto many = run(kernels(), qkv, T, H, dk, H * dk, threads);
        ASSERT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0) << threads;
    }
}

TEST_P(DotProductAttention, RefusesBadShapes) {
    pk::ThreadTeam team(1);
    pk::Arena arena;
    std::vector<float> buf(64);
    const float* x = buf.data();
    EXPECT_THROW(pk::kernels::dot_product_attention(kernels(), team, arena, x, x, x, 8, 2, 0, 8, 1.f, buf.data(), 8),
                 std::invalid_argument);
    EXPECT_THROW(pk::kernels::dot_product_attention(kernels(), team, arena, x, x, x, 7, 2, 1, 8, 1.f, buf.data(), 8),
                 std::invalid_argument);
}

// The bf16 products' tests run where the level has them (avx512 with AVX512_BF16).
class DotProductAttentionBf16 : public DotProductAttention {
protected:
    void SetUp() override {
        DotProductAttention::SetUp();
        if (!IsSkipped() && !pk::kernels::bf16_attention_available(kernels()))
            GTEST_SKIP() << pk::isa_level_name(level()) << " runs no bf16 products on this CPU";
    }
};

TEST_P(DotProductAttentionBf16, MatchesDoublePrecisionAttentionOfBf16Operands) {
    // The reference takes q, k and v rounded as the kernels round them; what is left is the
    // softmax weights' rounding to bfloat16 (8 bits) and the f32 sums. Shapes cover CED's
    // (248 tokens, heads of 64), odd T and dk (a half-empty pair), several key tiles and row
    // tiles, and value channels past one 64-channel tile (80) or short of one (40).
    for (auto [T, H, dk] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 1}, {2, 1, 3}, {17, 3, 5}, {67, 2, 40}, {131, 1, 80}, {248, 2, 64}}) {
        const std::vector<float> qkv = random_qkv(T, H, dk, static_cast<unsigned>(T * 37 + dk));
        const int64_t D = H * dk, ldo = D + 3;
        const auto got = run(kernels(), qkv, T, H, dk, ldo, 2, pk::kernels::AttentionProducts::Bf16);
        const auto want = reference(rounded_to_bf16(qkv), T, H, dk, 1.0 / std::sqrt(double(dk)));
        for (int64_t i = 0; i < T; ++i) {
            for (int64_t c = 0; c < D; ++c)
                ASSERT_NEAR(got[i * ldo + c], want[i * D + c], 4e-3 * (1 + std::fabs(want[i * D + c])))
                    << "T=" << T << " dk=" << dk << " row " << i << " column " << c;
            for (int64_t c = D; c < ldo; ++c) ASSERT_EQ(got[i * ldo + c], -7.0f) << "T=" << T << " wrote past H*dk";
        }
    }
}

TEST_P(DotProductAttentionBf16, BitwiseIdenticalAcrossTeamSizes) {
    const int64_t T = 75, H = 5, dk = 24;
    const std::vector<float> qkv = random_qkv(T, H, dk, 11);
    const auto one = run(kernels(), qkv, T, H, dk, H * dk, 1, pk::kernels::AttentionProducts::Bf16);
    for (int threads : {2, 3, 4}) {
        const auto many = run(kernels(), qkv, T, H, dk, H * dk, threads, pk::kernels::AttentionProducts::Bf16);
        ASSERT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0) << threads;
    }
}

TEST_P(DotProductAttention, Bf16ProductsAreRefusedWhereTheLevelHasNone) {
    if (pk::kernels::bf16_attention_available(kernels())) GTEST_SKIP() << "this level runs bf16 products";
    pk::ThreadTeam team(1);
    pk::Arena arena;
    std::vector<float> buf(64);
    const float* x = buf.data();
    EXPECT_THROW(pk::kernels::dot_product_attention(kernels(), team, arena, x, x, x, 8, 2, 1, 8, 1.f, buf.data(), 8,
                                                    pk::kernels::AttentionProducts::Bf16),
                 std::invalid_argument);
}

INSTANTIATE_ISA_LEVELS(DotProductAttention);
INSTANTIATE_ISA_LEVELS(DotProductAttentionBf16);

}  // namespace
