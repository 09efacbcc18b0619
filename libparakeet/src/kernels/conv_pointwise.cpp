#include "kernels/conv_pointwise.h"

#include "kernels/conv_avx2.h"
#include "kernels/ops_grain.h"
#include "runtime/cpu_features.h"

namespace pk::kernels {
namespace {

constexpr int64_t kPanel = 16;  // output channels per packed panel

// Portable path: one pixel row and one 16-channel panel at a time; the 16-wide inner loop
// vectorises. Each output is a sum over input channels in order, then the bias.
void pointwise_conv_rows_scalar(const float* x, int64_t cin, const float* packed, int64_t cout,
                                const float* bias, bool relu, int64_t row_begin,
                                int64_t row_end, float* y) {
    for (int64_t p = row_begin; p < row_end; ++p) {
        const float* xp = x + p * cin;
        for (int64_t o0 = 0; o0 < cout; o0 += kPanel) {
            const float* panel = packed + o0 * cin;
            float acc[kPanel] = {};
            for (int64_t i = 0; i < cin; ++i) {
                const float a = xp[i];
                const float* b = panel + i * kPanel;
                for (int64_t j = 0; j < kPanel; ++j) acc[j] += a * b[j];
            }
            const int64_t n = cout - o0 < kPanel ? cout - o0 : kPanel;
            float* yp = y + p * cout + o0;
            for (int64_t j = 0; j < n; ++j) {
                const float v = bias ? acc[j] + bias[o0 + j] : acc[j];
                yp[j] = relu && v < 0.0f ? 0.0f : v;
            }
        }
    }
}

}  // namespace

int64_t pointwise_conv_packed_size(int64_t cin, int64_t cout) {
    return (cout + kPanel - 1) / kPanel * kPanel * cin;
}

void pointwise_conv_pack_weight(const float* weight, int64_t cin, int64_t cout, float* packed) {
    const int64_t padded = (cout + kPanel - 1) / kPanel * kPanel;
    for (int64_t o = 0; o < padded; ++o)
        for (int64_t i = 0; i < cin; ++i)
            packed[(o / kPanel) * cin * kPanel + i * kPanel + o % kPanel] =
                o < cout ? weight[o * cin + i] : 0.0f;
}

void pointwise_conv(ThreadTeam& team, const float* x, int64_t P, int64_t cin,
                    const float* packed_weight, int64_t cout, const float* bias, bool relu,
                    float* y) {
    if (cout <= 0) return;
    auto* fn = &pointwise_conv_rows_scalar;
#if defined(PARAKEET_HAVE_X86)
    if (cpu_features().has_avx2_fma_f16c()) fn = &avx2::pointwise_conv_rows;
#endif
    // At least a few register tiles of rows per chunk, whatever the channel counts.
    int64_t grain = grain_for(cin * cout);
    if (grain < 24) grain = 24;
    parallel_for(team, P, grain, [&](int64_t begin, int64_t end) {
        fn(x, cin, packed_weight, cout, bias, relu, begin, end, y);
    });
}

}  // namespace pk::kernels
