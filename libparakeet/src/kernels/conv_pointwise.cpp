#include "kernels/conv_pointwise.h"

#include "kernels/kernel_table.h"
#include "kernels/ops_grain.h"

namespace pk::kernels {
namespace {

constexpr int64_t kPanel = 16;  // output channels per packed panel

constexpr int64_t kGroup = 16;  // panels accumulated together by the portable path

// Portable path: per pixel row, up to 16 panels (256 output channels) accumulate in a local
// row while the input channels go by in order; the 16-wide innermost loop vectorises. (An
// accumulator per single panel leaves the compiler vectorising the wrong loop, 3-5x slower.)
// Each output is a sum over input channels in order, then the bias.
void pointwise_conv_rows_scalar(const float* x, int64_t cin, const float* packed, int64_t cout,
                                const float* bias, bool relu, int64_t row_begin,
                                int64_t row_end, float* y) {
    float acc[kGroup * kPanel];
    for (int64_t p = row_begin; p < row_end; ++p) {
        const float* xp = x + p * cin;
        for (int64_t g0 = 0; g0 < cout; g0 += kGroup * kPanel) {
            const int64_t n = cout - g0 < kGroup * kPanel ? cout - g0 : kGroup * kPanel;
            const int64_t panels = (n + kPanel - 1) / kPanel;
            for (int64_t j = 0; j < panels * kPanel; ++j) acc[j] = 0.0f;
            for (int64_t i = 0; i < cin; ++i) {
                const float a = xp[i];
                for (int64_t q = 0; q < panels; ++q) {
                    const float* __restrict b = packed + (g0 + q * kPanel) * cin + i * kPanel;
                    float* __restrict s = acc + q * kPanel;
                    for (int64_t j = 0; j < kPanel; ++j) s[j] += a * b[j];
                }
            }
            float* yp = y + p * cout + g0;
            for (int64_t j = 0; j < n; ++j) {
                const float v = bias ? acc[j] + bias[g0 + j] : acc[j];
                yp[j] = relu && v < 0.0f ? 0.0f : v;
            }
        }
    }
}

}  // namespace

void add_conv_pointwise_scalar(KernelTable& t) { t.conv.pointwise_conv_rows = pointwise_conv_rows_scalar; }

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

void pointwise_conv(const KernelTable& k, ThreadTeam& team, const float* x, int64_t P, int64_t cin,
                    const float* packed_weight, int64_t cout, const float* bias, bool relu,
                    float* y) {
    if (cout <= 0) return;
    auto* fn = k.conv.pointwise_conv_rows;
    // At least a few register tiles of rows per chunk, whatever the channel counts.
    int64_t grain = grain_for(cin * cout);
    if (grain < 24) grain = 24;
    parallel_for(team, P, grain, [&](int64_t begin, int64_t end) {
        fn(x, cin, packed_weight, cout, bias, relu, begin, end, y);
    });
}

}  // namespace pk::kernels
