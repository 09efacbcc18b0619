#include "model/speaker/winograd_conv3x3.h"

#include <algorithm>

#include "kernels/conv_pointwise.h"

namespace pk::speaker {

namespace {

// A thread transforms its tiles a band at a time, the band's transformed inputs (or products)
// about this many floats (512 KiB), so that they stay in its core's cache for the products.
constexpr int64_t kBandValues = int64_t{1} << 17;

// G g G^T of one 3x3 kernel g (row-major), G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1].
void transform_kernel(const float* g, double u[16]) {
    double gg[4][3];  // G g
    for (int j = 0; j < 3; ++j) {
        const double g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
        gg[0][j] = g0;
        gg[1][j] = 0.5 * (g0 + g1 + g2);
        gg[2][j] = 0.5 * (g0 - g1 + g2);
        gg[3][j] = g2;
    }
    for (int a = 0; a < 4; ++a) {
        u[a * 4 + 0] = gg[a][0];
        u[a * 4 + 1] = 0.5 * (gg[a][0] + gg[a][1] + gg[a][2]);
        u[a * 4 + 2] = 0.5 * (gg[a][0] - gg[a][1] + gg[a][2]);
        u[a * 4 + 3] = gg[a][2];
    }
}

}  // namespace

WinogradConv3x3::WinogradConv3x3(const float* weight, int64_t out, int64_t in, IsaLevel level)
    : u_stride_(kernels::pointwise_conv_packed_size(in, out)),
      kernels_(&kernels::kernel_table(level)),
      in_(in),
      out_(out) {
    std::vector<float> u(static_cast<size_t>(16 * out * in));  // [16][out][in]
    double t[16];
    for (int64_t o = 0; o < out; ++o)
        for (int64_t c = 0; c < in; ++c) {
            transform_kernel(weight + (o * in + c) * 9, t);
            for (int k = 0; k < 16; ++k) u[(k * out + o) * in + c] = static_cast<float>(t[k]);
        }
    u_.resize(static_cast<size_t>(16 * u_stride_));
    for (int k = 0; k < 16; ++k)
        kernels::pointwise_conv_pack_weight(u.data() + k * out * in, in, out, u_.data() + k * u_stride_);
}

void WinogradConv3x3::forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, const float* bias,
                              float* y, bool relu) const {
    ArenaScope scope(arena);
    const int64_t n_tiles = (T + 1) / 2 * ((F + 1) / 2);
    const int64_t channels = std::max(in_, out_);
    const int64_t band = std::max<int64_t>(16, kBandValues / (16 * channels));
    const int nth = team.size();
    // Per thread: the transformed tiles of a band, their products and the transforms' scratch.
    float* v_all = arena.alloc_array<float>(static_cast<size_t>(nth * 16 * band * in_));
    float* m_all = arena.alloc_array<float>(static_cast<size_t>(nth * 16 * band * out_));
    float* work_all = arena.alloc_array<float>(static_cast<size_t>(nth * kernels::winograd_f2_work_floats(channels)));
    const kernels::ConvKernels& k = kernels_->conv;
    // Each thread runs every stage on its own run of tiles: one dispatch per convolution, and a
    // tile's bits do not depend on which thread has it.
    team.run([&](int ith, int n) {
        float* v = v_all + ith * 16 * band * in_;  // [16][tiles][in]
        float* m = m_all + ith * 16 * band * out_;  // [16][tiles][out]
        float* work = work_all + ith * kernels::winograd_f2_work_floats(channels);
        const int64_t end = n_tiles * (ith + 1) / n;
        for (int64_t first = n_tiles * ith / n; first < end; first += band) {
            const int64_t tiles = std::min(band, end - first);
            k.winograd_f2_input(x, T, F, in_, first, tiles, work, v);
            for (int j = 0; j < 16; ++j)
                k.pointwise_conv_rows(v + j * tiles * in_, in_, u_.data() + j * u_stride_, out_, nullptr, false, 0,
                                      tiles, m + j * tiles * out_);
            k.winograd_f2_output(m, T, F, out_, first, tiles, bias, relu, work, y);
        }
    });
}

}  // namespace pk::speaker
