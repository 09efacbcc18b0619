// matmul with ggml's 4- to 6-bit block weights (Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K): at
// every ISA level, against a double reference on the dequantised weights and the quantised
// activations; identical bits for any team size; the same bits at every level (the tiles share
// one order of float operations); and the resident size is the stored size.
#include "test_kernel_matmul_common.h"

#include <string>

#include "gguf/gguf_types.h"
#include "quant/ggml_blocks.h"

namespace {

using namespace matmul_test;
using pk::GgmlType;

const GgmlType kTypes[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

struct BlockWeights {
    std::vector<uint8_t> raw;
    std::vector<double> dequantised;  // [N][K]
};

// Random rows with per-row magnitudes and offsets, quantised by the reference quantiser.
BlockWeights random_block_weights(GgmlType type, int64_t N, int64_t K, uint32_t seed) {
    std::vector<float> w = random_floats(static_cast<size_t>(N * K), seed);
    for (int64_t n = 0; n < N; ++n) {
        for (int64_t k = 0; k < K; ++k) w[n * K + k] = w[n * K + k] * (0.02f + 0.01f * (n % 7)) + 0.003f * (n % 3);
    }
    BlockWeights out;
    out.raw.resize(pk::quant::row_bytes(type, K) * static_cast<size_t>(N));
    pk::quant::quantize_row(type, w.data(), N * K, out.raw.data());
    std::vector<float> back(w.size());
    pk::quant::dequantize_row(type, out.raw.data(), N * K, back.data());
    out.dequantised.assign(back.begin(), back.end());
    return out;
}

// The activation quantisation, written out independently (as for Q8_0): returns d * q.
std::vector<double> quantise_activations(const std::vector<float>& x) {
    std::vector<double> out(x.size());
    for (size_t b0 = 0; b0 < x.size(); b0 += 32) {
        float amax = 0.0f;
        for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b0 + i]));
        const float d = amax / 127.0f, id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (size_t i = 0; i < 32; ++i) out[b0 + i] = static_cast<double>(d) * std::nearbyint(x[b0 + i] * id);
    }
    return out;
}

std::string type_name(GgmlType t) { return pk::ggml_type_name(static_cast<uint32_t>(t)); }

class MatmulKquant : public isa_test::LevelTest {};

TEST_P(MatmulKquant, MatchesTheDequantisedProduct) {
    for (GgmlType type : kTypes) {
        SCOPED_TRACE(type_name(type));
        const int64_t block = pk::quant::block_values(type);
        for (const auto& [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 16, block * 2},
                                      {3, 37, block * 3}, {5, 48, block * 4}, {70, 33, block * 5}}) {
            const BlockWeights w = random_block_weights(type, N, K, static_cast<uint32_t>(N * K));
            const PackedWeights packed(static_cast<WeightType>(type), w.raw.data(), N, K, level());
            const std::vector<float> x = random_floats(static_cast<size_t>(M * K), 7, -2.0f, 2.0f);
            const std::vector<float> bias = random_floats(static_cast<size_t>(N), 11);
            const std::vector<float> y = run(packed, x, M, bias.data(), 1);
            expect_matches_reference(y, quantise_activations(x), w.dequantised, bias.data(), M, N, K, 2e-6);
        }
    }
}

TEST_P(MatmulKquant, SameBitsForAnyTeam) {
    for (GgmlType type : kTypes) {
        SCOPED_TRACE(type_name(type));
        const int64_t K = 2048, N = 200;
        const BlockWeights w = random_block_weights(type, N, K, 3);
        const PackedWeights packed(static_cast<WeightType>(type), w.raw.data(), N, K, level());
        for (int64_t M : {1, 4, 130}) {
            const std::vector<float> x = random_floats(static_cast<size_t>(M * K), 5);
            expect_same_bits_for_any_team(packed, x, M, nullptr);
        }
    }
}

TEST_P(MatmulKquant, SameBitsAsTheScalarLevel) {
    if (level() == pk::IsaLevel::Scalar) GTEST_SKIP() << "the scalar level is the reference here";
    for (GgmlType type : kTypes) {
        SCOPED_TRACE(type_name(type));
        const int64_t K = 1024, N = 40, M = 9;
        const BlockWeights w = random_block_weights(type, N, K, 9);
        const PackedWeights here(static_cast<WeightType>(type), w.raw.data(), N, K, level());
        const PackedWeights scalar(static_cast<WeightType>(type), w.raw.data(), N, K, pk::IsaLevel::Scalar);
        const std::vector<float> x = random_floats(static_cast<size_t>(M * K), 13);
        const std::vector<float> a = run(here, x, M, nullptr, 2), b = run(scalar, x, M, nullptr, 1);
        EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
    }
}

TEST_P(MatmulKquant, KeepsTheStoredSize) {
    for (GgmlType type : kTypes) {
        const int64_t K = pk::quant::block_values(type) * 4, N = 64;
        const BlockWeights w = random_block_weights(type, N, K, 1);
        const PackedWeights packed(static_cast<WeightType>(type), w.raw.data(), N, K, level());
        EXPECT_EQ(packed.packed_bytes(), w.raw.size()) << type_name(type);
    }
}

TEST_P(MatmulKquant, RefusesPartialBlocks) {
    const std::vector<uint8_t> raw(4096);
    EXPECT_THROW(PackedWeights(WeightType::Q4_K, raw.data(), 2, 128, level()), std::invalid_argument);
    EXPECT_THROW(PackedWeights(WeightType::Q4_0, raw.data(), 2, 48, level()), std::invalid_argument);
}

INSTANTIATE_ISA_LEVELS(MatmulKquant);

}  // namespace
