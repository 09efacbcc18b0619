// depthwise_conv1d equals PyTorch's Conv1d(C, C, k, padding=(k-1)/2, groups=C) on time-major
// data, with and without bias; folding an eval BatchNorm into it equals conv-then-BatchNorm;
// and the result has the same bits for any team size, at every ISA level; stacked sequences
// each get the bits they get alone.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "kernels/conv_depthwise1d.h"
#include "kernels/conv_depthwise_weights.h"
#include "test_kernel_ops_util.h"

namespace {

class KernelDepthwiseConv1d : public isa_test::LevelTest {};

struct Expected {
    std::vector<double> value;
    std::vector<double> magnitude;  // sum of |terms|: float accumulation errs in proportion
};

// PyTorch semantics on the PyTorch weight layout [C, 1, k]; x and y are [T, C].
Expected reference(const std::vector<float>& x, int64_t T, int64_t C, const std::vector<float>& w,
                   int64_t k, const float* bias) {
    Expected e{std::vector<double>(T * C), std::vector<double>(T * C)};
    const int64_t pad = (k - 1) / 2;
    for (int64_t t = 0; t < T; ++t) {
        for (int64_t c = 0; c < C; ++c) {
            double acc = bias ? bias[c] : 0.0;
            double mag = std::fabs(acc);
            for (int64_t j = 0; j < k; ++j) {
                const int64_t s = t + j - pad;
                if (s < 0 || s >= T) continue;
                const double term = static_cast<double>(w[c * k + j]) * x[s * C + c];
                acc += term;
                mag += std::fabs(term);
            }
            e.value[t * C + c] = acc;
            e.magnitude[t * C + c] = mag;
        }
    }
    return e;
}

std::vector<float> packed(const std::vector<float>& w, int64_t C, int64_t k) {
    std::vector<float> p(w.size());
    pk::kernels::pack_depthwise_weight(w.data(), C, k, p.data());
    return p;
}

TEST_P(KernelDepthwiseConv1d, MatchesPyTorchSemanticsOnOddShapes) {
    pk::ThreadTeam team(3);
    for (int64_t k : {1, 3, 9}) {
        for (int64_t T : {1, 3, 17, 130}) {
            for (int64_t C : {1, 5, 80, 513}) {
                const auto x = kt::random_vector(T * C, 71 + T * C);
                const auto w = kt::random_vector(C * k, 72 + k);
                const auto bias = kt::random_vector(C, 73);
                const auto pw = packed(w, C, k);
                const std::string what =
                    "k=" + std::to_string(k) + " T=" + std::to_string(T) + " C=" + std::to_string(C);
                for (const float* b : {bias.data(), static_cast<const float*>(nullptr)}) {
                    const Expected e = reference(x, T, C, w, k, b);
                    std::vector<double> tol(T * C);
                    for (int64_t i = 0; i < T * C; ++i) tol[i] = 1e-6 * e.magnitude[i] + 1e-30;
                    auto y = kt::poisoned(T * C);
                    pk::kernels::depthwise_conv1d(kernels(), team, x.data(), T, C, pw.data(), k, b, y.data());
                    kt::expect_near_all(y, e.value, tol, what + (b ? " bias" : " no bias"));
                }
            }
        }
    }
}

TEST_P(KernelDepthwiseConv1d, FoldedBatchNormEqualsConvThenBatchNorm) {
    pk::ThreadTeam team(2);
    const int64_t T = 23, C = 37, k = 9;
    const double eps = 1e-5;
    const auto x = kt::random_vector(T * C, 81);
    const auto w = kt::random_vector(C * k, 82);
    const auto conv_bias = kt::random_vector(C, 83);
    const auto gamma = kt::random_vector(C, 84, 0.5f, 2.0f);
    const auto beta = kt::random_vector(C, 85);
    const auto mean = kt::random_vector(C, 86);
    const auto var = kt::random_vector(C, 87, 0.01f, 3.0f);

    for (bool has_conv_bias : {true, false}) {
        const Expected conv = reference(x, T, C, w, k, has_conv_bias ? conv_bias.data() : nullptr);
        std::vector<double> want(T * C), tol(T * C);
        for (int64_t t = 0; t < T; ++t) {
            for (int64_t c = 0; c < C; ++c) {
                const double s = gamma[c] / std::sqrt(var[c] + eps);
                const int64_t i = t * C + c;
                want[i] = (conv.value[i] - mean[c]) * s + beta[c];
                tol[i] = 2e-6 * ((conv.magnitude[i] + std::fabs(mean[c])) * s + std::fabs(beta[c]));
            }
        }
        auto folded_w = w;
        std::vector<float> folded_b = has_conv_bias ? conv_bias : std::vector<float>(C, 0.0f);
        pk::kernels::fold_batchnorm_into_depthwise(folded_w.data(), folded_b.data(), C, k,
                                                   gamma.data(), beta.data(), mean.data(),
                                                   var.data(), static_cast<float>(eps));
        const auto pw = packed(folded_w, C, k);
        auto y = kt::poisoned(T * C);
        pk::kernels::depthwise_conv1d(kernels(), team, x.data(), T, C, pw.data(), k, folded_b.data(), y.data());
        kt::expect_near_all(y, want, tol,
                            has_conv_bias ? "fold with conv bias" : "fold without conv bias");
    }
}

TEST_P(KernelDepthwiseConv1d, SameBitsForAnyTeamSize) {
    const int64_t T = 101, C = 83, k = 9;
    const auto x = kt::random_vector(T * C, 91);
    const auto pw = packed(kt::random_vector(C * k, 92), C, k);
    const auto bias = kt::random_vector(C, 93);
    kt::expect_same_bits_for_thread_counts(
        T * C,
        [&](pk::ThreadTeam& team, float* y) {
            pk::kernels::depthwise_conv1d(kernels(), team, x.data(), T, C, pw.data(), k, bias.data(), y);
        },
        "depthwise_conv1d");
}

TEST_P(KernelDepthwiseConv1d, StackedSequencesGetTheirBitsAlone) {
    // Sequences shorter than the kernel's reach (1, 3) and longer, so that the padding of each
    // end of each sequence is exercised, and the team's shares cut sequences apart.
    const int64_t C = 83, k = 9;
    const std::vector<int64_t> lengths = {37, 1, 3, 40, 5};
    int64_t total = 0;
    for (int64_t T : lengths) total += T;
    const auto x = kt::random_vector(total * C, 94);
    const auto pw = packed(kt::random_vector(C * k, 95), C, k);
    const auto bias = kt::random_vector(C, 96);
    std::vector<float> alone(static_cast<size_t>(total * C));
    {
        pk::ThreadTeam team(1);
        for (size_t s = 0, first = 0; s < lengths.size(); first += static_cast<size_t>(lengths[s++] * C))
            pk::kernels::depthwise_conv1d(kernels(), team, x.data() + first, lengths[s], C, pw.data(), k, bias.data(),
                                          alone.data() + first);
    }
    for (int threads : {1, 2, 3}) {
        pk::ThreadTeam team(threads);
        std::vector<float> y(alone.size());
        pk::kernels::depthwise_conv1d_stacked(kernels(), team, x.data(), lengths.data(),
                                              static_cast<int64_t>(lengths.size()), C, pw.data(), k, bias.data(),
                                              y.data());
        ASSERT_EQ(std::memcmp(alone.data(), y.data(), y.size() * sizeof(float)), 0) << threads << " threads";
    }
}

INSTANTIATE_ISA_LEVELS(KernelDepthwiseConv1d);

}  // namespace
