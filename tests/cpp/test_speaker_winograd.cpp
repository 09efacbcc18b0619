// The 2-D speaker encoders' Winograd F(4x4, 3x3) convolution (model/speaker/winograd_conv3x3.h)
// equals a direct 3x3 convolution with zero padding 1 on maps whose sides are not multiples of
// the 4x4 tiles (partial tiles at both edges), with and without bias and ReLU, at every ISA
// level (its transforms and products are the level's kernels), and gives the same bits for any
// team size; with Q8_0 products (a quantised model's) it stays within the quantisation's error
// of the direct convolution, also at any team size, and needs whole blocks of input channels;
// a residual added in the output transform gives the bits of adding it after; a band of rows on
// the 4-row tile grid gives the whole map's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "model/speaker/winograd_conv3x3.h"
#include "test_kernel_ops_util.h"

namespace {

class SpeakerWinogradIsa : public isa_test::LevelTest {};

struct Shape {
    int64_t T, F, in, out;
};

std::string name(const Shape& s) {
    return "T=" + std::to_string(s.T) + " F=" + std::to_string(s.F) + " in=" + std::to_string(s.in) +
           " out=" + std::to_string(s.out);
}

// The direct convolution in double on the channels-last map x [T, F, in] with PyTorch's weight
// [out, in, 3, 3] (rows along F, columns along T), and the sum of |terms| behind each output
// (the float result errs in proportion to it).
void direct(const Shape& s, const std::vector<float>& x, const std::vector<float>& w, const float* bias, bool relu,
            std::vector<double>& want, std::vector<double>& mag) {
    want.assign(s.T * s.F * s.out, 0.0);
    mag.assign(want.size(), 0.0);
    for (int64_t t = 0; t < s.T; ++t)
        for (int64_t f = 0; f < s.F; ++f)
            for (int64_t o = 0; o < s.out; ++o) {
                double acc = bias ? bias[o] : 0.0, m = std::fabs(acc);
                for (int64_t c = 0; c < s.in; ++c)
                    for (int i = 0; i < 3; ++i)
                        for (int j = 0; j < 3; ++j) {
                            const int64_t ff = f + i - 1, tt = t + j - 1;
                            if (ff < 0 || ff >= s.F || tt < 0 || tt >= s.T) continue;
                            const double term =
                                static_cast<double>(w[((o * s.in + c) * 3 + i) * 3 + j]) * x[(tt * s.F + ff) * s.in + c];
                            acc += term;
                            m += std::fabs(term);
                        }
                const size_t at = (t * s.F + f) * s.out + o;
                want[at] = relu && acc < 0 ? 0.0 : acc;
                mag[at] = m;
            }
}

TEST_P(SpeakerWinogradIsa, EqualsTheDirectConvolution) {
    pk::ThreadTeam team(2);
    pk::Arena arena;
    for (const Shape& s : {Shape{1, 1, 2, 3}, Shape{5, 7, 3, 17}, Shape{13, 10, 32, 32}, Shape{9, 6, 40, 48}}) {
        const auto x = kt::random_vector(s.T * s.F * s.in, 11 + s.in);
        const auto w = kt::random_vector(s.out * s.in * 9, 12 + s.out);
        const auto b = kt::random_vector(s.out, 13);
        const pk::speaker::WinogradConv3x3 conv(w.data(), s.out, s.in, level());
        for (bool with_bias : {false, true})
            for (bool relu : {false, true}) {
                std::vector<double> want, mag;
                direct(s, x, w, with_bias ? b.data() : nullptr, relu, want, mag);
                std::vector<double> tol(mag.size());
                for (size_t i = 0; i < tol.size(); ++i) tol[i] = 1e-5 * mag[i] + 1e-30;
                auto y = kt::poisoned(want.size());
                conv.forward(team, arena, x.data(), s.T, s.F, with_bias ? b.data() : nullptr, nullptr, y.data(), relu);
                kt::expect_near_all(y, want, tol, name(s) + (with_bias ? " bias" : "") + (relu ? " relu" : ""));
            }
    }
}

using Products = pk::speaker::WinogradConv3x3::Products;

TEST_P(SpeakerWinogradIsa, Q8ProductsStayNearTheDirectConvolution) {
    pk::ThreadTeam team(2);
    pk::Arena arena;
    for (const Shape& s : {Shape{13, 10, 32, 32}, Shape{9, 6, 64, 48}, Shape{30, 21, 96, 20}}) {
        const auto x = kt::random_vector(s.T * s.F * s.in, 31 + s.in);
        const auto w = kt::random_vector(s.out * s.in * 9, 32 + s.out);
        const auto b = kt::random_vector(s.out, 33);
        const pk::speaker::WinogradConv3x3 conv(w.data(), s.out, s.in, level(), Products::Q8_0);
        std::vector<double> want, mag;
        direct(s, x, w, b.data(), false, want, mag);
        auto y = kt::poisoned(want.size());
        conv.forward(team, arena, x.data(), s.T, s.F, b.data(), nullptr, y.data(), false);
        // Each transformed value errs by up to half a step of its block's 127, and the output
        // transform (weights up to 8 per axis) sums those errors where the outputs cancel: on
        // these uniform random maps and weights (the worst case for cancellation) measured 3-6 %
        // of an output's sum of |terms| at worst and 6.4-7.3 % relative RMS error. f32 products
        // err 1e-6. (On the networks' maps it costs little: ResNet34's q8_0 embedding is at
        // cosine 0.99977 to PyTorch's, onnxruntime int8's at 0.99943; docs/performance.md.)
        double worst = 0.0, sum_sq = 0.0, want_sq = 0.0;
        for (size_t i = 0; i < want.size(); ++i) {
            const double err = y[i] - want[i];
            worst = std::max(worst, std::fabs(err) / mag[i]);
            sum_sq += err * err;
            want_sq += want[i] * want[i];
        }
        EXPECT_LT(worst, 0.12) << name(s);
        EXPECT_LT(std::sqrt(sum_sq / want_sq), 0.12) << name(s) << ": relative RMS error";
        EXPECT_GT(worst, 1e-5) << name(s) << ": no quantisation error at all, so the products were not Q8_0";
    }
}

TEST_P(SpeakerWinogradIsa, Q8ProductsNeedWholeBlocksOfInputs) {
    const auto w = kt::random_vector(8 * 40 * 9, 41);
    EXPECT_THROW(pk::speaker::WinogradConv3x3(w.data(), 8, 40, level(), Products::Q8_0), std::invalid_argument);
}

TEST_P(SpeakerWinogradIsa, TheResidualAddedInTheTransformIsTheSumAfter) {
    pk::ThreadTeam team(2);
    pk::Arena arena;
    for (const Shape& s : {Shape{7, 9, 32, 16}, Shape{10, 5, 32, 40}}) {  // 16: the avx512 transform; 40: its fallback
        const auto x = kt::random_vector(s.T * s.F * s.in, 51);
        const auto w = kt::random_vector(s.out * s.in * 9, 52);
        const auto b = kt::random_vector(s.out, 53);
        const auto residual = kt::random_vector(s.T * s.F * s.out, 54);
        for (Products products : {Products::F32, Products::Q8_0}) {
            const pk::speaker::WinogradConv3x3 conv(w.data(), s.out, s.in, level(), products);
            auto want = kt::poisoned(residual.size());
            conv.forward(team, arena, x.data(), s.T, s.F, b.data(), nullptr, want.data(), false);
            for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(want[i] + residual[i], 0.0f);
            auto got = kt::poisoned(residual.size());
            conv.forward(team, arena, x.data(), s.T, s.F, b.data(), residual.data(), got.data(), true);
            EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
                << name(s) << (products == Products::Q8_0 ? " q8_0" : " f32");
        }
    }
}

// ResNet34's banded blocks: output rows [r0, r1) of a map (r0 a multiple of 4), read from the
// rows around them, are the whole map's rows bit for bit; a band whose input holds only rows
// [r0 - 4, r1 + 4) of the map reads zeros where the map ends and no row outside what it is given.
TEST_P(SpeakerWinogradIsa, BandsOnTheTileGridGiveTheWholeMapsBits) {
    pk::ThreadTeam team(1);
    pk::Arena arena;
    const Shape s{29, 11, 32, 16};  // 16: the avx512 transforms; T = 29 ends in a partial tile
    const auto x = kt::random_vector(s.T * s.F * s.in, 61);
    const auto w = kt::random_vector(s.out * s.in * 9, 62);
    const auto b = kt::random_vector(s.out, 63);
    const auto residual = kt::random_vector(s.T * s.F * s.out, 64);
    const int64_t in_row = s.F * s.in, out_row = s.F * s.out;
    for (Products products : {Products::F32, Products::Q8_0}) {
        const pk::speaker::WinogradConv3x3 conv(w.data(), s.out, s.in, level(), products);
        auto whole = kt::poisoned(residual.size());
        conv.forward(team, arena, x.data(), s.T, s.F, b.data(), residual.data(), whole.data(), true);
        for (int64_t r0 : {0, 4, 12, 24, 28}) {
            for (int64_t r1 : {r0 + 1, r0 + 4, r0 + 9, s.T}) {
                if (r1 > s.T || r1 <= r0) continue;
                // Only the rows the band may read: [r0 - 4, r1 + 4) clipped to the map.
                const int64_t lo = std::max<int64_t>(0, r0 - 4), hi = std::min(s.T, r1 + 4);
                const std::vector<float> held(x.begin() + lo * in_row, x.begin() + hi * in_row);
                auto band = kt::poisoned((r1 - r0) * out_row);
                conv.forward_rows(team, arena, held.data() + (r0 - lo) * in_row, lo - r0, hi - r0, r1 - r0, s.F,
                                  b.data(), residual.data() + r0 * out_row, band.data(), true);
                EXPECT_EQ(0, std::memcmp(whole.data() + r0 * out_row, band.data(), band.size() * sizeof(float)))
                    << (products == Products::Q8_0 ? "q8_0" : "f32") << " rows " << r0 << " to " << r1;
            }
        }
    }
}

TEST_P(SpeakerWinogradIsa, SameBitsForAnyTeamSize) {
    const Shape s{41, 30, 64, 40};
    const auto x = kt::random_vector(s.T * s.F * s.in, 21);
    const auto w = kt::random_vector(s.out * s.in * 9, 22);
    const auto b = kt::random_vector(s.out, 23);
    for (Products products : {Products::F32, Products::Q8_0}) {
        const pk::speaker::WinogradConv3x3 conv(w.data(), s.out, s.in, level(), products);
        kt::expect_same_bits_for_thread_counts(
            s.T * s.F * s.out,
            [&](pk::ThreadTeam& team, float* y) {
                pk::Arena arena;
                conv.forward(team, arena, x.data(), s.T, s.F, b.data(), nullptr, y, true);
            },
            std::string(products == Products::Q8_0 ? "q8_0 " : "f32 ") + "winograd " + name(s));
    }
}

INSTANTIATE_ISA_LEVELS(SpeakerWinogradIsa);

}  // namespace
