// The one-thread Q8_0 product (kernels/matmul.h: matmul_q8_solo), at every ISA level: it gives
// the bits matmul() gives on the Gemm path for odd shapes, rows further apart than K, a wider
// y, with and without bias, stays inside the scratch it asked for, and refuses what matmul()
// refuses.
#include "test_kernel_matmul_common.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace {

using namespace matmul_test;

class MatmulQ8Solo : public isa_test::LevelTest {};

// matmul_q8_solo's y on the rows x (contiguous) copied ldx floats apart, its scratch of the
// size it asked for between two guard bands that must come back untouched.
std::vector<float> solo(const PackedWeights& w, const std::vector<float>& x, int64_t M, const float* bias,
                        int64_t ldy) {
    const int64_t K = w.k(), ldx = K + 40;
    std::vector<float> spread(static_cast<size_t>(M * ldx), std::nanf(""));
    for (int64_t m = 0; m < M; ++m) std::copy_n(x.begin() + m * K, K, spread.begin() + m * ldx);
    constexpr size_t kGuard = 64;
    const size_t bytes = pk::kernels::matmul_q8_solo_scratch_bytes(M, w);
    pk::Arena arena;  // 64-byte aligned memory
    uint8_t* mem = arena.alloc_array<uint8_t>(bytes + 2 * kGuard);
    std::fill_n(mem, bytes + 2 * kGuard, uint8_t{0xA5});
    std::vector<float> y(static_cast<size_t>(M * ldy), -12345.0f);
    pk::kernels::matmul_q8_solo(mem + kGuard, spread.data(), ldx, M, K, w, bias, y.data(), ldy);
    for (size_t i = 0; i < kGuard; ++i) {
        EXPECT_EQ(mem[i], 0xA5) << "wrote before its scratch";
        EXPECT_EQ(mem[kGuard + bytes + i], 0xA5) << "wrote past its scratch";
    }
    return y;
}

TEST_P(MatmulQ8Solo, SameBitsAsMatmul) {
    // M 300: more row panels than an A block; K 1056: more blocks than a K slice, and a partial one.
    for_each_q8_product(level(), {1, 5, 8, 13, 300}, {1, 17, 48}, {32, 160, 1056}, 80,
                        [&](const PackedWeights& w, const std::vector<float>& x, const std::vector<float>& bias,
                            const std::string& what) {
                            const int64_t M = static_cast<int64_t>(x.size()) / w.k(), ldy = w.n() + 3;
                            for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
                                const std::vector<float> want = run(w, x, M, b, 2, ldy, pk::kernels::MatmulPath::Gemm);
                                const std::vector<float> got = solo(w, x, M, b, ldy);
                                EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
                                    << what << (b ? " bias" : "");
                            }
                        });
}

TEST_P(MatmulQ8Solo, BadInputIsRefused) {
    const int64_t K = 64;
    const std::vector<float> x = random_floats(static_cast<size_t>(2 * K), 91);
    std::vector<float> y(8);
    const std::vector<float> f32 = random_floats(static_cast<size_t>(4 * K), 92);
    const PackedWeights wf(WeightType::F32, f32.data(), 4, K, level());
    const std::vector<uint8_t> raw = random_q8_weights(4, K, 93);
    const PackedWeights wq(WeightType::Q8_0, raw.data(), 4, K, level());
    pk::Arena arena;
    void* scratch = arena.alloc(pk::kernels::matmul_q8_solo_scratch_bytes(2, wq));
    using pk::kernels::matmul_q8_solo;
    EXPECT_THROW(matmul_q8_solo(scratch, x.data(), K, 2, K, wf, nullptr, y.data()), std::invalid_argument);
    EXPECT_THROW(matmul_q8_solo(scratch, x.data(), K, 2, K - 32, wq, nullptr, y.data()), std::invalid_argument);
    EXPECT_THROW(matmul_q8_solo(scratch, x.data(), K, 2, K, wq, nullptr, y.data(), 3), std::invalid_argument);
    EXPECT_THROW(matmul_q8_solo(scratch, x.data(), K - 1, 2, K, wq, nullptr, y.data()), std::invalid_argument);
}

INSTANTIATE_ISA_LEVELS(MatmulQ8Solo);

}  // namespace
