// Q8_0 products on rows quantised beforehand (kernels/matmul_q8_rows.h), at every ISA level:
// the quantised rows follow the documented rule; a product on them gives the bits matmul()
// gives on the float rows, for odd shapes, strided rows, a wider y and 1 to 3 threads; rows
// gathered run by run from a quantised map (matmul_q8_gather: what a convolution's unfolding
// does) give the product of the float rows gathered the same way; bad input is refused.
#include "test_kernel_matmul_common.h"

#include <stdexcept>

#include "kernels/matmul_q8_rows.h"

namespace {

using namespace matmul_test;
using pk::kernels::Q8Rows;

class MatmulQ8Rows : public isa_test::LevelTest {};

struct QuantisedRows {
    std::vector<int8_t> q;
    std::vector<float> scale;
    std::vector<int32_t> corr;
    Q8Rows view() { return Q8Rows{q.data(), scale.data(), corr.data()}; }
};

QuantisedRows quantise(pk::IsaLevel level, int threads, const std::vector<float>& x, int64_t rows, int64_t K,
                       int64_t ldx) {
    QuantisedRows r{std::vector<int8_t>(static_cast<size_t>(rows * K), 99),
                    std::vector<float>(static_cast<size_t>(rows * K / 32), 99.0f),
                    std::vector<int32_t>(static_cast<size_t>(rows * K / 32), 99)};
    pk::kernels::quantize_q8_rows(level, team(threads), x.data(), rows, K, ldx, r.view());
    return r;
}

std::vector<float> product(QuantisedRows& x, int64_t M, const PackedWeights& w, const float* bias, int threads,
                           int64_t ldy) {
    std::vector<float> y(static_cast<size_t>(M * ldy), -12345.0f);
    pk::Arena arena;
    pk::kernels::matmul_q8_rows(team(threads), arena, x.view(), M, w.k(), w, bias, y.data(), ldy);
    EXPECT_EQ(arena.used_bytes(), 0u) << "matmul_q8_rows must give its scratch back";
    return y;
}

void expect_same_bits(const std::vector<float>& want, const std::vector<float>& got, const std::string& what) {
    ASSERT_EQ(want.size(), got.size()) << what;
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float))) << what;
}

TEST_P(MatmulQ8Rows, QuantisedRowsFollowTheDocumentedRule) {
    const int64_t rows = 3, K = 352, ldx = K + 5;  // 11 blocks: a group of 8 and a partial one
    std::vector<float> x = random_floats(static_cast<size_t>(rows * ldx), 7, -4.0f, 4.0f);
    std::fill(x.begin() + ldx + 64, x.begin() + ldx + 96, 0.0f);  // a zero block: scale 0
    x[2 * ldx + 3] = -50.0f;                                       // a block whose largest |x| is negative
    QuantisedRows r = quantise(level(), 1, x, rows, K, ldx);
    for (int64_t row = 0; row < rows; ++row)
        for (int64_t b = 0; b < K / 32; ++b) {
            const float* xb = x.data() + row * ldx + b * 32;
            float amax = 0.0f;
            for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(xb[i]));
            const int64_t blk = row * (K / 32) + b;
            ASSERT_EQ(r.scale[blk], amax / 127.0f) << "row " << row << " block " << b;
            int32_t sum = 0;
            for (int i = 0; i < 32; ++i) {
                const float want = amax > 0.0f ? std::nearbyint(xb[i] * (127.0f / amax)) : 0.0f;
                ASSERT_EQ(r.q[blk * 32 + i], static_cast<int8_t>(want)) << "row " << row << " k " << b * 32 + i;
                sum += r.q[blk * 32 + i];
            }
            ASSERT_EQ(r.corr[blk], -128 * sum) << "row " << row << " block " << b;
        }
}

TEST_P(MatmulQ8Rows, SameBitsAsMatmulOnTheFloatRows) {
    // K 1056: more blocks than a K slice, and a partial one.
    for_each_q8_product(level(), {1, 3, 8, 13, 127}, {1, 17, 40}, {32, 96, 1056}, 40,
                        [&](const PackedWeights& w, const std::vector<float>& x, const std::vector<float>& bias,
                            const std::string& what) {
                            const int64_t M = static_cast<int64_t>(x.size()) / w.k(), K = w.k(), ldy = w.n() + 3;
                            const std::vector<float> want =
                                run(w, x, M, bias.data(), 1, ldy, pk::kernels::MatmulPath::Gemm);
                            for (int threads : {1, 2, 3}) {
                                QuantisedRows r = quantise(level(), threads, x, M, K, K);
                                expect_same_bits(want, product(r, M, w, bias.data(), threads, ldy),
                                                 what + ", " + std::to_string(threads) + " threads");
                            }
                        });
}

TEST_P(MatmulQ8Rows, GatheredRowsEqualTheGatheredFloats) {
    // A map of 40 positions x 64 channels (2 blocks) quantised once; rows of 3 taps gathered
    // from it (position p's row: positions p - 1, p, p + 1, zeros past the ends), as a kernel-3
    // convolution unfolds its input, against matmul() on the same rows gathered as floats.
    const int64_t P = 40, C = 64, taps = 3, K = taps * C, N = 24;
    const std::vector<float> map = random_floats(static_cast<size_t>(P * C), 61, -2.0f, 2.0f);
    const std::vector<uint8_t> raw = random_q8_weights(N, K, 62);
    const PackedWeights w(WeightType::Q8_0, raw.data(), N, K, level());
    QuantisedRows qmap = quantise(level(), 2, map, P, C, C);
    std::vector<float> unfolded(static_cast<size_t>(P * K), 0.0f);
    std::vector<int64_t> sources(static_cast<size_t>(P * taps));
    for (int64_t p = 0; p < P; ++p)
        for (int64_t j = 0; j < taps; ++j) {
            const int64_t src = p + j - 1;
            const bool outside = src < 0 || src >= P;
            sources[p * taps + j] = outside ? -1 : src;
            if (!outside) std::copy_n(map.begin() + src * C, C, unfolded.begin() + p * K + j * C);
        }
    const std::vector<float> want = run(w, unfolded, P, nullptr, 1, N, pk::kernels::MatmulPath::Gemm);
    for (int threads : {1, 2}) {
        std::vector<float> y(static_cast<size_t>(P * N), -12345.0f);
        pk::Arena arena;
        pk::kernels::matmul_q8_gather(team(threads), arena, {qmap.view(), C, sources.data()}, P, K, w, nullptr,
                                      y.data());
        expect_same_bits(want, y, std::to_string(threads) + " threads");
        EXPECT_EQ(arena.used_bytes(), 0u);
    }
}

TEST_P(MatmulQ8Rows, BadInputIsRefused) {
    const int64_t K = 64;
    const std::vector<float> x = random_floats(static_cast<size_t>(2 * K), 71);
    QuantisedRows r = quantise(level(), 1, x, 2, K, K);
    EXPECT_THROW(pk::kernels::quantize_q8_rows(level(), team(1), x.data(), 2, 48, 48, r.view()),
                 std::invalid_argument);
    EXPECT_THROW(pk::kernels::quantize_q8_rows(level(), team(1), x.data(), 2, K, K - 32, r.view()),
                 std::invalid_argument);
    const std::vector<float> f32 = random_floats(static_cast<size_t>(4 * K), 72);
    const PackedWeights wf(WeightType::F32, f32.data(), 4, K, level());
    std::vector<float> y(8);
    pk::Arena arena;
    EXPECT_THROW(pk::kernels::matmul_q8_rows(team(1), arena, r.view(), 2, K, wf, nullptr, y.data()),
                 std::invalid_argument);
    const std::vector<uint8_t> raw = random_q8_weights(4, 2 * K, 73);
    const PackedWeights wq(WeightType::Q8_0, raw.data(), 4, 2 * K, level());
    EXPECT_THROW(pk::kernels::matmul_q8_rows(team(1), arena, r.view(), 2, K, wq, nullptr, y.data()),
                 std::invalid_argument);
    const int64_t sources[4] = {0, 1, 1, 0};
    for (int64_t run : {48, 96})  // not whole blocks; whole blocks that do not divide K = 128
        EXPECT_THROW(pk::kernels::matmul_q8_gather(team(1), arena, {r.view(), run, sources}, 2, 2 * K, wq, nullptr,
                                                   y.data()),
                     std::invalid_argument);
}

INSTANTIATE_ISA_LEVELS(MatmulQ8Rows);

}  // namespace
