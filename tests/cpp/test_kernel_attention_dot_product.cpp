// Scaled dot-product attention (the ViT's: no mask, no positions) against a double-precision
// reference of softmax(q kᵀ * scale) v per head, on operands strided as a fused qkv buffer,
// and bitwise identical across team sizes, at every ISA level; its int8 scores and bf16 weighted
// sums against a reference that quantises and rounds as they do, where the level runs them.
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

float rounded_to_bf16(float x) { return pk::kernels::bf16_to_f32(pk::kernels::f32_to_bf16(x)); }

// x [n] quantised as the int8 products quantise a query or a key: scale = largest |x| / 127,
// x * (127 / largest) rounded to nearest even (all in floats). Returns the scale.
float quantised_to_int8(const float* x, int64_t n, std::vector<int>& q) {
    float mx = 0.0f;
    for (int64_t c = 0; c < n; ++c) mx = std::max(mx, std::fabs(x[c]));
    const float inv = mx > 0.0f ? 127.0f / mx : 0.0f;
    q.resize(static_cast<size_t>(n));
    for (int64_t c = 0; c < n; ++c) q[c] = static_cast<int>(std::nearbyint(x[c] * inv));
    return mx / 127.0f;
}

// What AttentionProducts::Int8Bf16 computes (attention_dot_product_int8_bf16.h), with its
// quantisation and roundings and the sums in double: per head, the keys minus their mean
// (summed in order of the keys) and the queries in int8, exact integer scores, softmax weights
// and values rounded to bfloat16.
std::vector<double> int8_bf16_reference(const std::vector<float>& qkv, int64_t T, int64_t H, int64_t dk,
                                        float scale) {
    const int64_t D = H * dk, ld = 3 * D;
    std::vector<double> out(static_cast<size_t>(T * D));
    for (int64_t h = 0; h < H; ++h) {
        std::vector<float> mean(static_cast<size_t>(dk), 0.0f), d(static_cast<size_t>(dk)), ks(static_cast<size_t>(T));
        for (int64_t j = 0; j < T; ++j)
            for (int64_t c = 0; c < dk; ++c) mean[c] += qkv[j * ld + D + h * dk + c];
        for (auto& m : mean) m /= static_cast<float>(T);
        std::vector<std::vector<int>> k8(static_cast<size_t>(T));
        for (int64_t j = 0; j < T; ++j) {
            for (int64_t c = 0; c < dk; ++c) d[c] = qkv[j * ld + D + h * dk + c] - mean[c];
            ks[j] = quantised_to_int8(d.data(), dk, k8[j]);
        }
        std::vector<int> q8;
        std::vector<double> w(static_cast<size_t>(T));
        for (int64_t i = 0; i < T; ++i) {
            const double qs = quantised_to_int8(&qkv[i * ld + h * dk], dk, q8) * scale;
            double mx = -1e300, sum = 0;
            for (int64_t j = 0; j < T; ++j) {
                int64_t dot = 0;
                for (int64_t c = 0; c < dk; ++c) dot += q8[c] * k8[j][c];
                w[j] = static_cast<double>(dot) * ks[j] * qs;
                mx = std::max(mx, w[j]);
            }
            for (auto& x : w) sum += (x = rounded_to_bf16(static_cast<float>(std::exp(x - mx))));
            for (int64_t c = 0; c < dk; ++c) {
                double o = 0;
                for (int64_t j = 0; j < T; ++j) o += w[j] * rounded_to_bf16(qkv[j * ld + 2 * D + h * dk + c]);
                out[i * D + h * dk + c] = o / sum;
            }
        }
    }
    return out;
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

// The int8/bf16 products' tests run where the level has them (avx512 with AVX512_BF16).
class DotProductAttentionInt8Bf16 : public DotProductAttention {
protected:
    void SetUp() override {
        DotProductAttention::SetUp();
        if (!IsSkipped() && !pk::kernels::int8_bf16_attention_available(kernels()))
            GTEST_SKIP() << pk::isa_level_name(level()) << " runs no int8/bf16 products on this CPU";
    }
};

TEST_P(DotProductAttentionInt8Bf16, MatchesAReferenceThatQuantisesAsItDoes) {
    // What is left between the two: float against double rounding of the scores, exp's last
    // bits, and the rare weight whose bfloat16 rounding that flips. Shapes cover CED's (248
    // tokens, heads of 64), odd T and dk (part-empty quads and pairs), several key tiles and row
    // tiles, and value channels past one 64-channel tile (80) or short of one (40).
    for (auto [T, H, dk] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 1}, {2, 1, 3}, {17, 3, 5}, {67, 2, 40}, {131, 1, 80}, {248, 2, 64}}) {
        const std::vector<float> qkv = random_qkv(T, H, dk, static_cast<unsigned>(T * 37 + dk));
        const int64_t D = H * dk, ldo = D + 3;
        const auto got = run(kernels(), qkv, T, H, dk, ldo, 2, pk::kernels::AttentionProducts::Int8Bf16);
        const auto want = int8_bf16_reference(qkv, T, H, dk, 1.0f / std::sqrt(static_cast<float>(dk)));
        for (int64_t i = 0; i < T; ++i) {
            for (int64_t c = 0; c < D; ++c)
                ASSERT_NEAR(got[i * ldo + c], want[i * D + c], 2e-4 * (1 + std::fabs(want[i * D + c])))
                    << "T=" << T << " dk=" << dk << " row " << i << " column " << c;
            for (int64_t c = D; c < ldo; ++c) ASSERT_EQ(got[i * ldo + c], -7.0f) << "T=" << T << " wrote past H*dk";
        }
    }
}

TEST_P(DotProductAttentionInt8Bf16, StaysNearTheExactAttention) {
    // The CED shape: int8 scores and bf16 weights move a result by a few thousandths.
    const int64_t T = 248, H = 2, dk = 64, D = H * dk;
    const std::vector<float> qkv = random_qkv(T, H, dk, 5);
    const auto got = run(kernels(), qkv, T, H, dk, D, 2, pk::kernels::AttentionProducts::Int8Bf16);
    const auto want = reference(qkv, T, H, dk, 1.0 / std::sqrt(double(dk)));
    for (int64_t i = 0; i < T * D; ++i) ASSERT_NEAR(got[i], want[i], 2e-2) << "value " << i;
}

TEST_P(DotProductAttentionInt8Bf16, BitwiseIdenticalAcrossTeamSizes) {
    const int64_t T = 75, H = 5, dk = 24;
    const std::vector<float> qkv = random_qkv(T, H, dk, 11);
    const auto one = run(kernels(), qkv, T, H, dk, H * dk, 1, pk::kernels::AttentionProducts::Int8Bf16);
    for (int threads : {2, 3, 4}) {
        const auto many = run(kernels(), qkv, T, H, dk, H * dk, threads, pk::kernels::AttentionProducts::Int8Bf16);
        ASSERT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0) << threads;
    }
}

TEST_P(DotProductAttention, Int8Bf16ProductsAreRefusedWhereTheLevelHasNone) {
    if (pk::kernels::int8_bf16_attention_available(kernels())) GTEST_SKIP() << "this level runs int8/bf16 products";
    pk::ThreadTeam team(1);
    pk::Arena arena;
    std::vector<float> buf(64);
    const float* x = buf.data();
    EXPECT_THROW(pk::kernels::dot_product_attention(kernels(), team, arena, x, x, x, 8, 2, 1, 8, 1.f, buf.data(), 8,
                                                    pk::kernels::AttentionProducts::Int8Bf16),
                 std::invalid_argument);
}

INSTANTIATE_ISA_LEVELS(DotProductAttention);
INSTANTIATE_ISA_LEVELS(DotProductAttentionInt8Bf16);

}  // namespace
