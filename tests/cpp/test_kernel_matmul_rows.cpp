// Row independence of matmul(), the property batched streaming rests on (CacheAwareBatch
// stacks the rows of many streams into one product): on a fixed path (MatmulPath::Gemm, or
// MatmulPath::Matvec) output row r has the same bits whatever the number of rows M, wherever
// r sits among them (row panels, their partial tails, the A blocks of the cache blocking) and
// whatever the team size. For every weight type (F32, F16, BF16 where the level runs it, Q8_0
// with its per-row activation quantisation, and ggml's 4- to 6-bit blocks) at every ISA level
// this CPU has. (MatmulPath::Auto switches kernels at M = 5: for F32, F16 and BF16 they sum in
// other orders, so it is row-independent only on either side of that; Q8_0 and the block
// types sum in one order on both paths, kernels::path_invariant.) And matvec_row_bias, a Matvec
// product with a bias row per row, gives each row what it gets alone.
#include "test_kernel_matmul_common.h"

#include <string>
#include <utility>

#include "gguf/gguf_types.h"
#include "quant/ggml_blocks.h"

namespace {

using namespace matmul_test;
using pk::GgmlType;
using pk::kernels::MatmulPath;

// N: two full 16-output panels and a partial one. K: three F32 K slices (256) and two Q8 ones
// (512), whole K-quant blocks (256).
constexpr int64_t kN = 40, kK = 768;
// Rows to draw from; each batch takes a window of them starting at a different row.
constexpr int64_t kPool = 300;

const GgmlType kStoredTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::Q8_0, GgmlType::Q4_0,
                                 GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q4_K,
                                 GgmlType::Q5_K, GgmlType::Q6_K};

std::string type_name(GgmlType t) { return pk::ggml_type_name(static_cast<uint32_t>(t)); }

// The weights of `type` packed for `level`, from random floats quantised by ggml's reference
// quantiser (the weight type ids are ggml's).
PackedWeights packed(GgmlType type, pk::IsaLevel level) {
    const std::vector<float> w = random_floats(static_cast<size_t>(kN * kK), 7, -0.05f, 0.05f);
    std::vector<uint8_t> raw(pk::quant::row_bytes(type, kK) * kN);
    pk::quant::quantize_row(type, w.data(), kN * kK, raw.data());
    return PackedWeights(static_cast<WeightType>(type), raw.data(), kN, kK, level);
}

// Every row of the pool alone (M = 1), then batches of many sizes, each a window of the pool
// starting at its own offset, at 1 and 2 threads: every output row equals its row's M = 1 result.
void expect_rows_independent(const PackedWeights& w, MatmulPath path, const std::string& what) {
    const std::vector<float> pool = random_floats(static_cast<size_t>(kPool * kK), 11, -3.0f, 3.0f);
    const std::vector<float> bias = random_floats(kN, 13);
    std::vector<float> alone(static_cast<size_t>(kPool * kN));
    for (int64_t r = 0; r < kPool; ++r) {
        const std::vector<float> row(pool.begin() + r * kK, pool.begin() + (r + 1) * kK);
        const std::vector<float> y = run(w, row, 1, bias.data(), 1, -1, path);
        std::copy(y.begin(), y.end(), alone.begin() + r * kN);
    }
    // Both sides of the matrix-vector limit (4), partial and whole row panels of every tile
    // height (4, 6, 8, 12, 16), and more than one A block (240 / 256 rows).
    for (const int64_t M : {2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 37, 261}) {
        const int64_t first = (M * 7) % kPool;
        std::vector<float> x(static_cast<size_t>(M * kK));
        for (int64_t m = 0; m < M; ++m) {
            const int64_t r = (first + m) % kPool;
            std::copy(pool.begin() + r * kK, pool.begin() + (r + 1) * kK, x.begin() + m * kK);
        }
        for (const int threads : {1, 2}) {
            const std::vector<float> y = run(w, x, M, bias.data(), threads, -1, path);
            int bad = 0;
            for (int64_t m = 0; m < M && bad < 3; ++m) {
                const int64_t r = (first + m) % kPool;
                if (std::memcmp(y.data() + m * kN, alone.data() + r * kN, kN * sizeof(float)) != 0) {
                    ++bad;
                    ADD_FAILURE() << what << ": row " << m << " of M=" << M << " at " << threads
                                  << " threads differs from the same row alone";
                }
            }
        }
    }
}

class MatmulRows : public isa_test::LevelTest {};

TEST_P(MatmulRows, GemmComputesEachRowAlone) {
    for (const GgmlType type : kStoredTypes) expect_rows_independent(packed(type, level()), MatmulPath::Gemm, type_name(type));
}

TEST_P(MatmulRows, MatvecComputesEachRowAlone) {
    for (const GgmlType type : kStoredTypes) expect_rows_independent(packed(type, level()), MatmulPath::Matvec, type_name(type));
}

// Q8_0 and the block types run kernels that sum a row in one order on both paths, so even
// Auto computes each row alone: batched products of these weights may take the GEMM tiles
// for any M.
TEST_P(MatmulRows, Q8_0AndBlockTypesComputeEachRowAloneOnAnyPath) {
    for (const GgmlType type : kStoredTypes) {
        if (!pk::kernels::path_invariant(static_cast<WeightType>(type))) continue;
        for (const MatmulPath path : {MatmulPath::Auto, MatmulPath::Gemm, MatmulPath::Matvec})
            expect_rows_independent(packed(type, level()), path, type_name(type));
    }
}

// The fixed paths compute what the automatic one does, each on its side of the switch.
TEST_P(MatmulRows, FixedPathsAreTheAutomaticOnesKernels) {
    const std::vector<float> x = random_floats(static_cast<size_t>(9 * kK), 19, -3.0f, 3.0f);
    for (const GgmlType type : kStoredTypes) {
        const PackedWeights w = packed(type, level());
        for (const auto& [M, path] : {std::pair<int64_t, MatmulPath>{3, MatmulPath::Matvec}, {9, MatmulPath::Gemm}}) {
            const std::vector<float> rows(x.begin(), x.begin() + M * kK);
            EXPECT_EQ(run(w, rows, M, nullptr, 1), run(w, rows, M, nullptr, 1, -1, path))
                << type_name(type) << " M=" << M;
        }
    }
}

// matvec_row_bias (a batched prediction-net step: one bias row per stream): row m has the bits
// of that row alone, with its own bias row, at M = 1 (the lone step's product).
TEST_P(MatmulRows, RowBiasComputesEachRowAloneWithItsBias) {
    const int64_t M = 7;
    const std::vector<float> x = random_floats(static_cast<size_t>(M * kK), 23, -3.0f, 3.0f);
    const std::vector<float> biases = random_floats(static_cast<size_t>(M * kN), 29);
    for (const GgmlType type : kStoredTypes) {
        const PackedWeights w = packed(type, level());
        for (const int threads : {1, 2}) {
            std::vector<float> y(static_cast<size_t>(M * kN), -12345.0f);
            pk::Arena arena;
            pk::kernels::matvec_row_bias(team(threads), arena, x.data(), M, kK, w, biases.data(), y.data());
            EXPECT_EQ(arena.used_bytes(), 0u) << "matvec_row_bias must give its scratch back";
            for (int64_t m = 0; m < M; ++m) {
                const std::vector<float> row(x.begin() + m * kK, x.begin() + (m + 1) * kK);
                const std::vector<float> alone = run(w, row, 1, biases.data() + m * kN, threads);
                EXPECT_EQ(0, std::memcmp(y.data() + m * kN, alone.data(), kN * sizeof(float)))
                    << type_name(type) << ": row " << m << " at " << threads << " threads";
            }
        }
    }
}

TEST_P(MatmulRows, Bf16ComputesEachRowAlone) {
    if (!PackedWeights::bf16_available(level())) {
        GTEST_SKIP() << "BF16 weights do not run at " << pk::isa_level_name(level())
                     << " on this CPU (they need avx512 with AVX512_BF16)";
    }
    const std::vector<float> w = random_floats(static_cast<size_t>(kN * kK), 17, -0.05f, 0.05f);
    const PackedWeights pw = PackedWeights::to_bf16(WeightType::F32, w.data(), kN, kK, level());
    expect_rows_independent(pw, MatmulPath::Gemm, "bf16");
    expect_rows_independent(pw, MatmulPath::Matvec, "bf16");
}

INSTANTIATE_ISA_LEVELS(MatmulRows);

}  // namespace
