// The dw_striding subsampling convs equal PyTorch's NCHW Conv2d on odd sizes; the pointwise
// conv equals a 1x1 Conv2d; flatten_channel_major produces NeMo's transpose(1, 2).reshape
// order; the masked pipeline reproduces NeMo's MaskedConvSequential; and every kernel gives
// the same bits for any team size, at every ISA level.
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "isa_levels.h"
#include "kernels/conv_depthwise_weights.h"
#include "kernels/conv_pointwise.h"
#include "kernels/conv_subsampling.h"
#include "test_kernel_ops_util.h"

namespace {

using pk::kernels::conv3x3_s2_output_size;

// The convs at every ISA level (the layout helpers have one portable version).
class KernelSubsamplingIsa : public isa_test::LevelTest {};

// An NCHW tensor of one image in double, with the sum of |terms| behind each value (float
// accumulation errs in proportion to it).
struct Map {
    int64_t C = 0, H = 0, W = 0;
    std::vector<double> v, mag;
    double& at(int64_t c, int64_t h, int64_t w) { return v[(c * H + h) * W + w]; }
    double at(int64_t c, int64_t h, int64_t w) const { return v[(c * H + h) * W + w]; }
    double mag_at(int64_t c, int64_t h, int64_t w) const { return mag[(c * H + h) * W + w]; }
};

// PyTorch Conv2d(Cin, Cout, kernel, stride, padding, groups) with weight [Cout, Cin/groups,
// kernel, kernel] and bias [Cout].
Map conv2d(const Map& in, const std::vector<float>& weight, const std::vector<float>& bias,
           int64_t Cout, int64_t kernel, int64_t stride, int64_t pad, int64_t groups) {
    Map out;
    out.C = Cout;
    out.H = (in.H + 2 * pad - kernel) / stride + 1;
    out.W = (in.W + 2 * pad - kernel) / stride + 1;
    out.v.assign(out.C * out.H * out.W, 0.0);
    out.mag.assign(out.v.size(), 0.0);
    const int64_t cin_per_group = in.C / groups, cout_per_group = Cout / groups;
    for (int64_t o = 0; o < Cout; ++o) {
        const int64_t g = o / cout_per_group;
        for (int64_t h = 0; h < out.H; ++h) {
            for (int64_t w = 0; w < out.W; ++w) {
                double acc = bias[o], mag = std::fabs(bias[o]);
                for (int64_t ci = 0; ci < cin_per_group; ++ci) {
                    for (int64_t i = 0; i < kernel; ++i) {
                        for (int64_t j = 0; j < kernel; ++j) {
                            const int64_t s = h * stride + i - pad, u = w * stride + j - pad;
                            if (s < 0 || s >= in.H || u < 0 || u >= in.W) continue;
                            const int64_t c = g * cin_per_group + ci;
                            const double wv =
                                weight[((o * cin_per_group + ci) * kernel + i) * kernel + j];
                            acc += wv * in.at(c, s, u);
                            mag += std::fabs(wv) * in.mag_at(c, s, u);
                        }
                    }
                }
                out.at(o, h, w) = acc;
                out.mag[(o * out.H + h) * out.W + w] = mag;
            }
        }
    }
    return out;
}

void relu(Map& m) {
    for (double& x : m.v) x = x > 0 ? x : 0.0;
}

// NeMo's time mask: rows h >= length of every channel become 0.
void mask_time(Map& m, int64_t length) {
    for (int64_t c = 0; c < m.C; ++c)
        for (int64_t h = length; h < m.H; ++h)
            for (int64_t w = 0; w < m.W; ++w) {
                m.at(c, h, w) = 0.0;
                m.mag[(c * m.H + h) * m.W + w] = 0.0;
            }
}

Map image(const std::vector<float>& x, int64_t T, int64_t F) {
    Map m;
    m.C = 1;
    m.H = T;
    m.W = F;
    m.v.assign(x.begin(), x.end());
    m.mag.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) m.mag[i] = std::fabs(x[i]);
    return m;
}

// Our channels-last [H, W, C] map against the NCHW reference.
void expect_channels_last_equals(const std::vector<float>& got, const Map& want, double rtol,
                                 const std::string& what) {
    std::vector<double> value(got.size()), tol(got.size());
    ASSERT_EQ(got.size(), want.v.size()) << what;
    for (int64_t h = 0; h < want.H; ++h)
        for (int64_t w = 0; w < want.W; ++w)
            for (int64_t c = 0; c < want.C; ++c) {
                const int64_t i = (h * want.W + w) * want.C + c;
                value[i] = want.at(c, h, w);
                tol[i] = rtol * want.mag_at(c, h, w) + 1e-30;
            }
    kt::expect_near_all(got, value, tol, what);
}

std::vector<float> pack_3x3(const std::vector<float>& w, int64_t C) {
    std::vector<float> p(w.size());
    pk::kernels::pack_depthwise_weight(w.data(), C, 9, p.data());
    return p;
}

std::vector<float> pack_pointwise(const std::vector<float>& w, int64_t cin, int64_t cout) {
    std::vector<float> p(pk::kernels::pointwise_conv_packed_size(cin, cout));
    pk::kernels::pointwise_conv_pack_weight(w.data(), cin, cout, p.data());
    return p;
}

std::string shape(int64_t T, int64_t F, int64_t C) {
    return "T=" + std::to_string(T) + " F=" + std::to_string(F) + " C=" + std::to_string(C);
}

TEST(KernelSubsampling, OutputSizeIsFloorOfHalfPlusOne) {
    // floor((n + 2 - 3) / 2) + 1
    EXPECT_EQ(conv3x3_s2_output_size(0), 0);
    EXPECT_EQ(conv3x3_s2_output_size(1), 1);
    EXPECT_EQ(conv3x3_s2_output_size(2), 1);
    EXPECT_EQ(conv3x3_s2_output_size(3), 2);
    EXPECT_EQ(conv3x3_s2_output_size(80), 40);
    EXPECT_EQ(conv3x3_s2_output_size(128), 64);
    EXPECT_EQ(conv3x3_s2_output_size(1001), 501);
    EXPECT_EQ(conv3x3_s2_output_size(conv3x3_s2_output_size(conv3x3_s2_output_size(1000))), 125);
}

TEST_P(KernelSubsamplingIsa, FirstConvMatchesNchwConv2d) {
    pk::ThreadTeam team(3);
    for (int stride : {2, 1})  // the subsampling's; the speaker networks' stem
        for (int64_t T : {1, 3, 17, 31}) {
            for (int64_t F : {7, 80, 128}) {
                for (int64_t C : {1, 5, 40}) {
                    const auto x = kt::random_vector(T * F, 101 + T * F);
                    const auto w = kt::random_vector(C * 9, 102 + C);
                    const auto b = kt::random_vector(C, 103);
                    const auto pw = pack_3x3(w, C);
                    for (bool with_relu : {false, true}) {
                        Map want = conv2d(image(x, T, F), w, b, C, 3, stride, 1, 1);
                        if (with_relu) relu(want);
                        auto y = kt::poisoned(want.v.size());
                        pk::kernels::conv2d_3x3_single_channel(kernels(), team, x.data(), T, F, stride, pw.data(),
                                                               b.data(), C, with_relu, y.data());
                        expect_channels_last_equals(y, want, 1e-6,
                                                    shape(T, F, C) + " stride " + std::to_string(stride) +
                                                        (with_relu ? " relu" : ""));
                    }
                }
            }
        }
}

TEST_P(KernelSubsamplingIsa, DepthwiseConvMatchesGroupedNchwConv2d) {
    pk::ThreadTeam team(2);
    for (int64_t T : {1, 4, 17}) {
        for (int64_t F : {7, 40, 64}) {
            for (int64_t C : {1, 5, 40, 256}) {
                // Build the channels-last input and the same data as an NCHW map.
                const auto x = kt::random_vector(T * F * C, 111 + T * F * C);
                Map in;
                in.C = C;
                in.H = T;
                in.W = F;
                in.v.resize(x.size());
                in.mag.resize(x.size());
                for (int64_t t = 0; t < T; ++t)
                    for (int64_t f = 0; f < F; ++f)
                        for (int64_t c = 0; c < C; ++c) {
                            in.at(c, t, f) = x[(t * F + f) * C + c];
                            in.mag[(c * T + t) * F + f] = std::fabs(x[(t * F + f) * C + c]);
                        }
                const auto w = kt::random_vector(C * 9, 112 + C);
                const auto b = kt::random_vector(C, 113);
                const Map want = conv2d(in, w, b, C, 3, 2, 1, C);
                auto y = kt::poisoned(want.v.size());
                pk::kernels::depthwise_conv2d_3x3_s2(kernels(), team, x.data(), T, F, C, pack_3x3(w, C).data(),
                                                     b.data(), y.data());
                expect_channels_last_equals(y, want, 1e-6, shape(T, F, C));
            }
        }
    }
}

TEST_P(KernelSubsamplingIsa, PointwiseConvIsAMatrixProductOverChannels) {
    pk::ThreadTeam team(3);
    for (int64_t P : {1, 7, 53}) {
        for (int64_t cin : {1, 5, 37, 256}) {
            for (int64_t cout : {1, 5, 16, 37, 48, 256}) {
                const auto x = kt::random_vector(P * cin, 121 + P * cin);
                const auto w = kt::random_vector(cout * cin, 122 + cin * cout);
                const auto b = kt::random_vector(cout, 123);
                const auto packed = pack_pointwise(w, cin, cout);
                for (bool with_bias : {true, false}) {
                    for (bool with_relu : {false, true}) {
                        std::vector<double> want(P * cout), tol(P * cout);
                        for (int64_t p = 0; p < P; ++p)
                            for (int64_t o = 0; o < cout; ++o) {
                                double acc = with_bias ? b[o] : 0.0;
                                double mag = std::fabs(acc);
                                for (int64_t i = 0; i < cin; ++i) {
                                    acc += static_cast<double>(w[o * cin + i]) * x[p * cin + i];
                                    mag += std::fabs(static_cast<double>(w[o * cin + i]) * x[p * cin + i]);
                                }
                                want[p * cout + o] = with_relu && acc < 0 ? 0.0 : acc;
                                tol[p * cout + o] = 1e-6 * mag + 1e-30;
                            }
                        auto y = kt::poisoned(P * cout);
                        pk::kernels::pointwise_conv(kernels(), team, x.data(), P, cin, packed.data(), cout,
                                                    with_bias ? b.data() : nullptr, with_relu,
                                                    y.data());
                        kt::expect_near_all(y, want, tol,
                                            "P=" + std::to_string(P) + " cin=" + std::to_string(cin) +
                                                " cout=" + std::to_string(cout) +
                                                (with_bias ? " bias" : "") + (with_relu ? " relu" : ""));
                    }
                }
            }
        }
    }
}

TEST(KernelSubsampling, FlattenIsChannelMajorPerFrame) {
    pk::ThreadTeam team(2);
    const int64_t T = 5, F = 7, C = 3;
    std::vector<float> x(T * F * C);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    auto y = kt::poisoned(x.size());
    pk::kernels::flatten_channel_major(team, x.data(), T, F, C, y.data());
    // NeMo: out[t][c * F + f] = conv[c][t][f], and conv[c][t][f] is x[(t * F + f) * C + c].
    for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t f = 0; f < F; ++f)
                EXPECT_EQ(y[t * C * F + c * F + f], x[(t * F + f) * C + c]) << t << " " << c << " " << f;
}

TEST(KernelSubsampling, ZeroTimeStepsClearsOnlyStepsPastTheValidLength) {
    const int64_t T = 6, step = 10;
    for (int64_t valid : {-1, 0, 1, 5, 6, 9}) {
        auto x = kt::random_vector(T * step, 131, 1.0f, 2.0f);  // never 0
        pk::kernels::zero_time_steps(x.data(), T, step, valid);
        for (int64_t t = 0; t < T; ++t)
            for (int64_t i = 0; i < step; ++i) {
                if (t < valid) {
                    EXPECT_NE(x[t * step + i], 0.0f) << "valid=" << valid << " t=" << t;
                } else {
                    EXPECT_EQ(x[t * step + i], 0.0f) << "valid=" << valid << " t=" << t;
                }
            }
    }
}

// The whole dw_striding stage as NeMo 3.0 runs it, in NCHW and double: mask before every
// layer and after the last, the length following each stride-2 conv, then
// x.transpose(1, 2).reshape(T, C * F).
struct StageWeights {
    int64_t C;
    std::vector<float> w0, b0, dw1, db1, pw1, pb1, dw2, db2, pw2, pb2;
};

std::vector<double> nemo_stage(const std::vector<float>& mel, int64_t T, int64_t F,
                               int64_t mel_len, const StageWeights& s, bool mask,
                               std::vector<double>* magnitude) {
    const int64_t C = s.C;
    int64_t len = mel_len;
    Map x = image(mel, T, F);
    auto masked = [&](Map m) {
        if (mask) mask_time(m, len);
        return m;
    };
    x = conv2d(masked(x), s.w0, s.b0, C, 3, 2, 1, 1);
    len = conv3x3_s2_output_size(len);
    x = masked(x);
    relu(x);
    x = conv2d(masked(x), s.dw1, s.db1, C, 3, 2, 1, C);
    len = conv3x3_s2_output_size(len);
    x = conv2d(masked(x), s.pw1, s.pb1, C, 1, 1, 0, 1);
    x = masked(x);
    relu(x);
    x = conv2d(masked(x), s.dw2, s.db2, C, 3, 2, 1, C);
    len = conv3x3_s2_output_size(len);
    x = conv2d(masked(x), s.pw2, s.pb2, C, 1, 1, 0, 1);
    x = masked(x);
    relu(x);
    x = masked(x);
    std::vector<double> out(x.v.size());
    magnitude->resize(x.v.size());
    for (int64_t t = 0; t < x.H; ++t)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t f = 0; f < x.W; ++f) {
                out[t * C * x.W + c * x.W + f] = x.at(c, t, f);
                (*magnitude)[t * C * x.W + c * x.W + f] = x.mag_at(c, t, f);
            }
    return out;
}

// The same stage with the kernels, in the order documented in conv_subsampling.h.
std::vector<float> our_stage(const pk::kernels::KernelTable& k, pk::ThreadTeam& team,
                             std::vector<float> mel, int64_t T, int64_t F, int64_t mel_len,
                             const StageWeights& s) {
    using namespace pk::kernels;
    const int64_t C = s.C;
    const int64_t T1 = conv3x3_s2_output_size(T), F1 = conv3x3_s2_output_size(F);
    const int64_t T2 = conv3x3_s2_output_size(T1), F2 = conv3x3_s2_output_size(F1);
    const int64_t T3 = conv3x3_s2_output_size(T2), F3 = conv3x3_s2_output_size(F2);
    const int64_t L1 = conv3x3_s2_output_size(mel_len);
    const int64_t L2 = conv3x3_s2_output_size(L1), L3 = conv3x3_s2_output_size(L2);

    zero_time_steps(mel.data(), T, F, mel_len);
    std::vector<float> a(T1 * F1 * C), b(T2 * F2 * C), c(T2 * F2 * C), d(T3 * F3 * C),
        e(T3 * F3 * C), out(T3 * C * F3);
    conv2d_3x3_single_channel(k, team, mel.data(), T, F, 2, pack_3x3(s.w0, C).data(), s.b0.data(), C, true,
                              a.data());
    zero_time_steps(a.data(), T1, F1 * C, L1);
    depthwise_conv2d_3x3_s2(k, team, a.data(), T1, F1, C, pack_3x3(s.dw1, C).data(), s.db1.data(),
                            b.data());
    pointwise_conv(k, team, b.data(), T2 * F2, C, pack_pointwise(s.pw1, C, C).data(), C,
                   s.pb1.data(), true, c.data());
    zero_time_steps(c.data(), T2, F2 * C, L2);
    depthwise_conv2d_3x3_s2(k, team, c.data(), T2, F2, C, pack_3x3(s.dw2, C).data(), s.db2.data(),
                            d.data());
    pointwise_conv(k, team, d.data(), T3 * F3, C, pack_pointwise(s.pw2, C, C).data(), C,
                   s.pb2.data(), true, e.data());
    zero_time_steps(e.data(), T3, F3 * C, L3);
    flatten_channel_major(team, e.data(), T3, F3, C, out.data());
    return out;
}

StageWeights random_stage(int64_t C, uint32_t seed) {
    // NeMo's init ranges: conv0 and depthwise +-1/3, pointwise +-1/sqrt(C).
    const float pw = 1.0f / std::sqrt(static_cast<float>(C));
    return StageWeights{C,
                        kt::random_vector(C * 9, seed, -0.34f, 0.34f),
                        kt::random_vector(C, seed + 1, -0.34f, 0.34f),
                        kt::random_vector(C * 9, seed + 2, -0.34f, 0.34f),
                        kt::random_vector(C, seed + 3, -0.34f, 0.34f),
                        kt::random_vector(C * C, seed + 4, -pw, pw),
                        kt::random_vector(C, seed + 5, -pw, pw),
                        kt::random_vector(C * 9, seed + 6, -0.34f, 0.34f),
                        kt::random_vector(C, seed + 7, -0.34f, 0.34f),
                        kt::random_vector(C * C, seed + 8, -pw, pw),
                        kt::random_vector(C, seed + 9, -pw, pw)};
}

TEST_P(KernelSubsamplingIsa, MaskedStageReproducesNemoIncludingFlattenOrder) {
    pk::ThreadTeam team(3);
    struct Case {
        int64_t T, F, mel_len, C;
    };
    for (const Case k : {Case{37, 80, 33, 19}, Case{23, 128, 23, 32}, Case{9, 7, 4, 5},
                         Case{1, 80, 1, 8}}) {
        // The frames past mel_len are not zero here, so only masking makes the results agree.
        const auto mel = kt::random_vector(k.T * k.F, 141 + k.T);
        const StageWeights s = random_stage(k.C, 150);
        std::vector<double> magnitude;
        const auto want = nemo_stage(mel, k.T, k.F, k.mel_len, s, true, &magnitude);
        const auto got = our_stage(kernels(), team, mel, k.T, k.F, k.mel_len, s);
        std::vector<double> tol(want.size());
        for (size_t i = 0; i < want.size(); ++i) tol[i] = 1e-5 * magnitude[i] + 1e-30;
        kt::expect_near_all(got, want, tol, shape(k.T, k.F, k.C) + " len=" + std::to_string(k.mel_len));
    }
}

TEST(KernelSubsampling, MaskingChangesValidFramesSoTheStageTestCanFail) {
    // Without NeMo's masking, valid output frames change (the conv windows of the last valid
    // frames reach past the valid length): the stage test above would notice a missing mask.
    const int64_t T = 37, F = 80, mel_len = 33;
    const auto mel = kt::random_vector(T * F, 141 + T);
    const StageWeights s = random_stage(19, 150);
    std::vector<double> magnitude;
    const auto masked = nemo_stage(mel, T, F, mel_len, s, true, &magnitude);
    const auto unmasked = nemo_stage(mel, T, F, mel_len, s, false, &magnitude);
    const int64_t valid = conv3x3_s2_output_size(conv3x3_s2_output_size(conv3x3_s2_output_size(mel_len)));
    const int64_t frame = static_cast<int64_t>(masked.size()) / 5;
    double max_diff = 0.0;
    for (int64_t i = 0; i < valid * frame; ++i)
        max_diff = std::max(max_diff, std::fabs(masked[i] - unmasked[i]));
    EXPECT_GT(max_diff, 1e-3);
}

TEST_P(KernelSubsamplingIsa, SameBitsForAnyTeamSize) {
    const int64_t T = 61, F = 80, C = 40;
    const int64_t T1 = conv3x3_s2_output_size(T), F1 = conv3x3_s2_output_size(F);
    const int64_t T2 = conv3x3_s2_output_size(T1), F2 = conv3x3_s2_output_size(F1);
    const auto mel = kt::random_vector(T * F, 161);
    const auto map = kt::random_vector(T1 * F1 * C, 162);
    const auto w = pack_3x3(kt::random_vector(C * 9, 163), C);
    const auto b = kt::random_vector(C, 164);
    const auto pw = pack_pointwise(kt::random_vector(C * C, 165), C, C);
    kt::expect_same_bits_for_thread_counts(
        T1 * F1 * C,
        [&](pk::ThreadTeam& team, float* y) {
            pk::kernels::conv2d_3x3_single_channel(kernels(), team, mel.data(), T, F, 2, w.data(), b.data(), C,
                                                   true, y);
        },
        "conv2d_3x3_single_channel");
    kt::expect_same_bits_for_thread_counts(
        T2 * F2 * C,
        [&](pk::ThreadTeam& team, float* y) {
            pk::kernels::depthwise_conv2d_3x3_s2(kernels(), team, map.data(), T1, F1, C, w.data(), b.data(), y);
        },
        "depthwise_conv2d_3x3_s2");
    // 611 pixel rows: chunks end inside register tiles.
    kt::expect_same_bits_for_thread_counts(
        611 * C,
        [&](pk::ThreadTeam& team, float* y) {
            pk::kernels::pointwise_conv(kernels(), team, map.data(), 611, C, pw.data(), C, b.data(), true, y);
        },
        "pointwise_conv");
}

TEST(KernelSubsampling, FlattenGivesTheSameBitsForAnyTeamSize) {
    const int64_t T1 = conv3x3_s2_output_size(61), F1 = conv3x3_s2_output_size(80), C = 40;
    const auto map = kt::random_vector(T1 * F1 * C, 162);
    kt::expect_same_bits_for_thread_counts(
        T1 * F1 * C,
        [&](pk::ThreadTeam& team, float* y) {
            pk::kernels::flatten_channel_major(team, map.data(), T1, F1, C, y);
        },
        "flatten_channel_major");
}

INSTANTIATE_ISA_LEVELS(KernelSubsamplingIsa);

#if defined(PARAKEET_HAVE_X86)
// The AVX-512 pointwise conv runs each output's multiply-adds in the AVX2 kernel's order, in
// full and partial tiles of rows and panels.
TEST(KernelSubsampling, PointwiseConvAvx512GivesTheAvx2Bits) {
    const std::string why = isa_test::missing_reason({pk::IsaLevel::Avx2, pk::IsaLevel::Avx512});
    if (!why.empty()) GTEST_SKIP() << why;
    ASSERT_NE(pk::kernels::kernel_table(pk::IsaLevel::Avx512).conv.pointwise_conv_rows,
              pk::kernels::kernel_table(pk::IsaLevel::Avx2).conv.pointwise_conv_rows)
        << "the avx512 level has its own kernel";
    // Two threads: a thread's rows can end inside a register tile. 48 output channels end on a
    // full lone panel, 5 and 37 on a partial one.
    pk::ThreadTeam team(2);
    for (int64_t P : {1, 5, 12, 13, 47, 53, 611}) {
        for (int64_t cout : {5, 16, 37, 48, 256}) {
            const int64_t cin = 256 - cout % 7;
            const auto x = kt::random_vector(P * cin, 171 + P);
            const auto packed = pack_pointwise(kt::random_vector(cout * cin, 172 + cout), cin, cout);
            const auto b = kt::random_vector(cout, 173);
            for (bool with_bias : {true, false})
                for (bool relu : {true, false}) {
                    std::vector<float> y2(P * cout), y512(P * cout);
                    for (auto [level, y] :
                         {std::pair{pk::IsaLevel::Avx2, y2.data()}, std::pair{pk::IsaLevel::Avx512, y512.data()}})
                        pk::kernels::pointwise_conv(pk::kernels::kernel_table(level), team, x.data(), P, cin,
                                                    packed.data(), cout, with_bias ? b.data() : nullptr, relu, y);
                    EXPECT_EQ(std::memcmp(y2.data(), y512.data(), y2.size() * sizeof(float)), 0)
                        << "P=" << P << " cout=" << cout << (with_bias ? " bias" : "") << (relu ? " relu" : "");
                }
        }
    }
}
#endif

}  // namespace
