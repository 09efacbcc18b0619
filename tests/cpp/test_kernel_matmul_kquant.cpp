// matmul with ggml's 4- to 6-bit block weights (Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K): at
// every ISA level, against a double reference on the dequantised weights and the quantised
// activations; identical bits for any team size; the same bits at every level (the tiles share
// one order of float operations); and the resident size is the stored size.
#include "test_kernel_matmul_common.h"

#include <string>

#include "gguf/gguf_types.h"
#include "kernels/kernel_table.h"
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
        const int64_t K = 1024, N = 40;
        const BlockWeights w = random_block_weights(type, N, K, 9);
        const PackedWeights here(static_cast<WeightType>(type), w.raw.data(), N, K, level());
        const PackedWeights scalar(static_cast<WeightType>(type), w.raw.data(), N, K, pk::IsaLevel::Scalar);
        // Last row panels of 1, 2 and 3 rows besides full ones (the i8mm tile works in row pairs).
        for (int64_t M : {9, 6, 7}) {
            const std::vector<float> x = random_floats(static_cast<size_t>(M * K), 13);
            const std::vector<float> a = run(here, x, M, nullptr, 2), b = run(scalar, x, M, nullptr, 1);
            EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << "M=" << M;
        }
    }
}

// The i8mm level's decoder writes the portable units with their u in the documented pair order
// (matmul_layout.h), the floats unchanged.
TEST(MatmulKquantLevels, I8mmDecodesThePairOrder) {
    namespace md = pk::kernels::matmul_detail;
    if (!pk::cpu_features().supports(pk::IsaLevel::I8mm)) GTEST_SKIP() << "this CPU has no i8mm level";
    const auto& i8mm = pk::kernels::kernel_table(pk::IsaLevel::I8mm).matmul;
    const auto& scalar = pk::kernels::kernel_table(pk::IsaLevel::Scalar).matmul;
    for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q6_K}) {
        SCOPED_TRACE(type_name(type));
        const int64_t K = 512, N = 16, units = K / 32;
        const BlockWeights w = random_block_weights(type, N, K, 17);
        const PackedWeights packed(static_cast<WeightType>(type), w.raw.data(), N, K, pk::IsaLevel::Scalar);
        std::vector<uint8_t> quads(units * md::kKqUnitBytes), pairs(units * md::kKqUnitBytes);
        scalar.decode_kq_units(static_cast<WeightType>(type), packed.panel(0), 0, units, quads.data());
        i8mm.decode_kq_units(static_cast<WeightType>(type), packed.panel(0), 0, units, pairs.data());
        const size_t floats = 4 * md::kPanel * sizeof(float);
        for (int64_t u = 0; u < units; ++u) {
            const uint8_t* q = quads.data() + u * md::kKqUnitBytes;
            const uint8_t* p = pairs.data() + u * md::kKqUnitBytes;
            ASSERT_EQ(0, std::memcmp(q, p, floats)) << "unit " << u;
            for (int64_t j = 0; j < md::kPanel; ++j) {
                for (int64_t i = 0; i < 32; ++i) {
                    ASSERT_EQ(p[floats + (i / 8) * 128 + 16 * (j / 2) + 8 * (j % 2) + i % 8],
                              q[floats + (i / 4) * 64 + 4 * j + i % 4])
                        << "unit " << u << ", output " << j << ", k=" << i;
                }
            }
        }
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
