// The speaker encoders' quantised convolutions (model/speaker/conv2d_gemm.h, a quantised file's
// F32 kernels quantised at load): whether the map is quantised once and its int8 blocks gathered
// (channels a multiple of 32) or the unfolded float rows are quantised (other channel counts, a
// 1x1 kernel of stride 2 along both axes), the output has the bits of matmul() on the input
// unfolded as floats in tap-major order with the same Q8_0 weights, at every ISA level, for the
// CAM++ shapes (a stride-2 3x3 head conv, the kernel-5 stride-2 tdnn, a dilated kernel-3 local
// conv, 1x1 shortcuts of stride 2 along one axis and along both, a 1x1 on a strided map), with
// strided input and output rows, ReLU, and 1 or 3 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gguf_test_builder.h"
#include "gguf_test_loader.h"
#include "isa_levels.h"
#include "kernels/matmul.h"
#include "model/layers/q8_at_load.h"
#include "model/speaker/conv2d_gemm.h"
#include "test_kernel_ops_util.h"

namespace {

using pk::speaker::Conv2dGemm;
using pk::speaker::ConvGeometry;

class SpeakerConvQ8 : public isa_test::LevelTest {};

struct Case {
    const char* name;
    int64_t in, out;
    int kf, kt;
    ConvGeometry g;
    int64_t T, F;
};

// x [T, F, in] (row stride ldx) unfolded as floats: row (to * Fo + fo), column (i * kt + j) * in + c.
std::vector<float> unfold_floats(const Case& c, const std::vector<float>& x, int64_t ldx, int64_t To, int64_t Fo) {
    const int64_t cols = c.in * c.kf * c.kt;
    std::vector<float> rows(static_cast<size_t>(To * Fo * cols), 0.0f);
    for (int64_t to = 0; to < To; ++to)
        for (int64_t fo = 0; fo < Fo; ++fo)
            for (int i = 0; i < c.kf; ++i)
                for (int j = 0; j < c.kt; ++j) {
                    const int64_t f = fo * c.g.stride_f + i - c.g.pad_f;
                    const int64_t t = to * c.g.stride_t + j * c.g.dilation_t - c.g.pad_t;
                    if (f < 0 || f >= c.F || t < 0 || t >= c.T) continue;
                    std::copy_n(x.begin() + (t * c.F + f) * ldx, c.in,
                                rows.begin() + (to * Fo + fo) * cols + (i * c.kt + j) * c.in);
                }
    return rows;
}

void check(pk::IsaLevel level, const Case& c) {
    SCOPED_TRACE(c.name);
    const int64_t taps = static_cast<int64_t>(c.kf) * c.kt, cols = c.in * taps;
    const std::vector<float> w = kt::random_vector(c.out * cols, 31 + c.in);  // PyTorch's [out, in, kf, kt]
    const std::vector<float> bias = kt::random_vector(c.out, 32);
    const std::vector<uint8_t> file =
        gguf_test::GgufBuilder()
            .tensor_f32("w",
                        {static_cast<uint64_t>(c.kt), static_cast<uint64_t>(c.kf), static_cast<uint64_t>(c.in),
                         static_cast<uint64_t>(c.out)},
                        w)
            .tensor_f32("b", {static_cast<uint64_t>(c.out)}, bias)
            .build();
    const gguf_test::LoadedGguf loaded(file, level, /*q8_at_load=*/true);
    const Conv2dGemm conv = Conv2dGemm::load(loaded.gguf, loaded.loader, "w", "b", c.in, c.g);

    // The reference: the weight in tap-major columns, quantised as the loader quantises it, and
    // matmul() on the float rows.
    std::vector<float> tap_major(static_cast<size_t>(c.out * cols));
    for (int64_t o = 0; o < c.out; ++o)
        for (int64_t ch = 0; ch < c.in; ++ch)
            for (int64_t tap = 0; tap < taps; ++tap) tap_major[o * cols + tap * c.in + ch] = w[o * cols + ch * taps + tap];
    const pk::kernels::PackedWeights packed = pk::q8_0_at_load(tap_major.data(), c.out, cols, level);

    const int64_t ldx = c.in + 8, ldy = c.out + 5, To = conv.out_t(c.T), Fo = conv.out_f(c.F);
    const std::vector<float> x = kt::random_vector(c.T * c.F * ldx, 33);
    const std::vector<float> rows = unfold_floats(c, x, ldx, To, Fo);
    pk::ThreadTeam one(1);
    pk::Arena arena;
    for (bool relu : {false, true}) {
        std::vector<float> want(static_cast<size_t>(To * Fo * ldy), -7.0f);
        pk::kernels::matmul(one, arena, rows.data(), To * Fo, cols, packed, bias.data(), want.data(), ldy,
                            pk::kernels::MatmulPath::Gemm);
        if (relu)
            for (int64_t r = 0; r < To * Fo; ++r)
                for (int64_t o = 0; o < c.out; ++o) want[r * ldy + o] = std::max(want[r * ldy + o], 0.0f);
        for (int threads : {1, 3}) {
            pk::ThreadTeam team(threads);
            std::vector<float> got(want.size(), -7.0f);
            conv.forward(team, arena, x.data(), c.T, c.F, ldx, got.data(), ldy, relu);
            EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
                << (relu ? "relu, " : "") << threads << " threads";
            EXPECT_EQ(arena.used_bytes(), 0u);
        }
    }
}

TEST_P(SpeakerConvQ8, SameBitsAsTheProductOfTheUnfoldedFloats) {
    // ConvGeometry: stride_t, stride_f, pad_t, pad_f, dilation_t.
    const Case cases[] = {
        {"head 3x3, frequency stride 2", 32, 32, 3, 3, {1, 2, 1, 1, 1}, 9, 11},
        {"tdnn kernel 5, stride 2", 64, 48, 1, 5, {2, 1, 2, 0, 1}, 23, 1},
        {"local kernel 3, dilation 2", 32, 16, 1, 3, {1, 1, 2, 0, 2}, 17, 1},
        {"shortcut 1x1, frequency stride 2", 32, 32, 1, 1, {1, 2, 0, 0, 1}, 6, 9},
        {"shortcut 1x1, stride 2 along both axes", 32, 32, 1, 1, {2, 2, 0, 0, 1}, 8, 9},
        {"1x1 on a strided map", 64, 24, 1, 1, {}, 13, 1},
        {"16 channels, 2x2: blocks straddle two taps", 16, 8, 2, 2, {1, 2, 0, 0, 1}, 7, 6},
    };
    for (const Case& c : cases) check(level(), c);
}

INSTANTIATE_ISA_LEVELS(SpeakerConvQ8);

}  // namespace
