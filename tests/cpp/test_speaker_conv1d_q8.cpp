// The TDNN encoders' quantised 1-D convolutions (model/speaker/tdnn_layers.h: Conv1dSame, a
// quantised file's F32 kernels quantised at load, rows padded with zeros to whole Q8_0 blocks):
// whether the input is quantised once and its int8 blocks gathered tap by tap (a multiple of 32
// channels) or the unfolded float rows are padded and quantised (ECAPA's block 0, 80 mels), the
// output has the bits of matmul() on the input unfolded as floats in tap-major order with reflect
// padding, zero columns to whole blocks and the same Q8_0 weights, at every ISA level, for ECAPA's
// shapes (Res2Net's dilated kernel-3 convolutions, a 1x1 on strided rows, block 0) and a kernel 5
// at its shortest input, with strided input and output rows and 1 or 3 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gguf_test_builder.h"
#include "gguf_test_loader.h"
#include "isa_levels.h"
#include "kernels/matmul.h"
#include "model/layers/q8_at_load.h"
#include "model/speaker/tdnn_layers.h"
#include "test_kernel_ops_util.h"

namespace {

using pk::speaker::Conv1dSame;

class SpeakerConv1dQ8 : public isa_test::LevelTest {};

struct Case {
    const char* name;
    int64_t in, out;
    int kernel, dilation;
    int64_t T;
};

// Columns of the product: in * kernel, padded to whole Q8_0 blocks.
int64_t padded_cols(const Case& c) { return (c.in * c.kernel + 31) / 32 * 32; }

// x [T, in] (row stride ldx) unfolded as floats with reflect padding (frame -1 is frame 1):
// row t, column j * in + c, zeros past in * kernel.
std::vector<float> unfold_floats(const Case& c, const std::vector<float>& x, int64_t ldx) {
    const int64_t cols = padded_cols(c), pad = (c.kernel - 1) / 2 * c.dilation;
    std::vector<float> rows(static_cast<size_t>(c.T * cols), 0.0f);
    for (int64_t t = 0; t < c.T; ++t)
        for (int j = 0; j < c.kernel; ++j) {
            int64_t s = t + j * c.dilation - pad;
            s = s < 0 ? -s : s >= c.T ? 2 * (c.T - 1) - s : s;
            std::copy_n(x.begin() + s * ldx, c.in, rows.begin() + t * cols + j * c.in);
        }
    return rows;
}

void check(pk::IsaLevel level, const Case& c) {
    SCOPED_TRACE(c.name);
    const int64_t cols = padded_cols(c);
    const std::vector<float> w = kt::random_vector(c.out * c.in * c.kernel, 41 + c.in);  // PyTorch's [out, in, kernel]
    const std::vector<float> bias = kt::random_vector(c.out, 42);
    const std::vector<uint8_t> file =
        gguf_test::GgufBuilder()
            .tensor_f32("x.conv.weight",
                        {static_cast<uint64_t>(c.kernel), static_cast<uint64_t>(c.in), static_cast<uint64_t>(c.out)},
                        w)
            .tensor_f32("x.conv.bias", {static_cast<uint64_t>(c.out)}, bias)
            .build();
    const gguf_test::LoadedGguf loaded(file, level, /*q8_at_load=*/true);
    const Conv1dSame conv = Conv1dSame::load(loaded.loader, "x", c.in, c.out, c.kernel, c.dilation);

    // The reference: the weight in tap-major columns, quantised as the loader quantises it, and
    // matmul() on the float rows.
    std::vector<float> tap_major(static_cast<size_t>(c.out * cols), 0.0f);
    for (int64_t o = 0; o < c.out; ++o)
        for (int64_t ch = 0; ch < c.in; ++ch)
            for (int j = 0; j < c.kernel; ++j) tap_major[o * cols + j * c.in + ch] = w[(o * c.in + ch) * c.kernel + j];
    const pk::kernels::PackedWeights packed = pk::q8_0_at_load(tap_major.data(), c.out, cols, level);

    const int64_t ldx = c.in + 8, ldy = c.out + 5;
    const std::vector<float> x = kt::random_vector(c.T * ldx, 43);
    const std::vector<float> rows = unfold_floats(c, x, ldx);
    pk::ThreadTeam one(1);
    pk::Arena arena;
    std::vector<float> want(static_cast<size_t>(c.T * ldy), -7.0f);
    pk::kernels::matmul(one, arena, rows.data(), c.T, cols, packed, bias.data(), want.data(), ldy);
    for (int threads : {1, 3}) {
        pk::ThreadTeam team(threads);
        std::vector<float> got(want.size(), -7.0f);
        conv.forward(team, arena, x.data(), c.T, ldx, got.data(), ldy);
        EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float))) << threads << " threads";
        EXPECT_EQ(arena.used_bytes(), 0u);
    }
}

TEST_P(SpeakerConv1dQ8, SameBitsAsTheProductOfTheUnfoldedFloats) {
    const Case cases[] = {
        {"Res2Net kernel 3, dilation 2", 64, 64, 3, 2, 23},
        {"Res2Net kernel 3, dilation 4, 5 frames", 32, 32, 3, 4, 5},
        {"1x1 on strided rows", 96, 40, 1, 1, 19},
        {"kernel 5 at the shortest input", 32, 48, 5, 1, 3},
        {"block 0: 80 mels x kernel 5, rows padded to 13 blocks", 80, 40, 5, 1, 21},
    };
    for (const Case& c : cases) check(level(), c);
}

INSTANTIATE_ISA_LEVELS(SpeakerConv1dQ8);

}  // namespace
