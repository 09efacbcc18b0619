// The 2-D speaker encoders' Winograd F(4x4, 3x3) convolution (model/speaker/winograd_conv3x3.h)
// equals a direct 3x3 convolution with zero padding 1 on maps whose sides are not multiples of
// the 4x4 tiles (partial tiles at both edges), with and without bias and ReLU, at every ISA
// level (its transforms and products are the level's kernels), and gives the same bits for any
// team size.
#include <gtest/gtest.h>

#include <cmath>
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
                conv.forward(team, arena, x.data(), s.T, s.F, with_bias ? b.data() : nullptr, y.data(), relu);
                kt::expect_near_all(y, want, tol, name(s) + (with_bias ? " bias" : "") + (relu ? " relu" : ""));
            }
    }
}

TEST_P(SpeakerWinogradIsa, SameBitsForAnyTeamSize) {
    const Shape s{41, 30, 24, 40};
    const auto x = kt::random_vector(s.T * s.F * s.in, 21);
    const auto w = kt::random_vector(s.out * s.in * 9, 22);
    const auto b = kt::random_vector(s.out, 23);
    const pk::speaker::WinogradConv3x3 conv(w.data(), s.out, s.in, level());
    kt::expect_same_bits_for_thread_counts(
        s.T * s.F * s.out,
        [&](pk::ThreadTeam& team, float* y) {
            pk::Arena arena;
            conv.forward(team, arena, x.data(), s.T, s.F, b.data(), y, true);
        },
        "winograd " + name(s));
}

INSTANTIATE_ISA_LEVELS(SpeakerWinogradIsa);

}  // namespace
