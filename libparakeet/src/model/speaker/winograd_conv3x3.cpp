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

// B^T applied across four rows of n values: (d0 - d2, d1 + d2, d2 - d1, d1 - d3).
void combine(const float* __restrict d0, const float* __restrict d1, const float* __restrict d2,
             const float* __restrict d3, int64_t n, float* __restrict o0, float* __restrict o1, float* __restrict o2,
             float* __restrict o3) {
    for (int64_t c = 0; c < n; ++c) {
        o0[c] = d0[c] - d2[c];
        o1[c] = d1[c] + d2[c];
        o2[c] = d2[c] - d1[c];
        o3[c] = d1[c] - d3[c];
    }
}

// A^T applied across four rows of n values: (m0 + m1 + m2, m1 - m2 - m3).
void reduce(const float* __restrict m0, const float* __restrict m1, const float* __restrict m2,
            const float* __restrict m3, int64_t n, float* __restrict o0, float* __restrict o1) {
    for (int64_t c = 0; c < n; ++c) {
        o0[c] = m0[c] + m1[c] + m2[c];
        o1[c] = m1[c] - m2[c] - m3[c];
    }
}

void finish(float* __restrict y, const float* __restrict bias, int64_t n, bool relu) {
    if (bias != nullptr)
        for (int64_t c = 0; c < n; ++c) y[c] += bias[c];
    if (relu)
        for (int64_t c = 0; c < n; ++c) y[c] = std::max(y[c], 0.0f);
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
    const int64_t tiles_f = (F + 1) / 2, n_tiles = (T + 1) / 2 * tiles_f;
    const int64_t band = std::max<int64_t>(16, kBandValues / (16 * std::max(in_, out_)));
    const int nth = team.size();
    // Per thread: the transformed tiles of a band and their products.
    float* v_all = arena.alloc_array<float>(static_cast<size_t>(nth * 16 * band * in_));
    float* m_all = arena.alloc_array<float>(static_cast<size_t>(nth * 16 * band * out_));
    const std::vector<float> zeros(static_cast<size_t>(in_), 0.0f);
    // Each thread runs every stage on its own run of tiles: one dispatch per convolution, and a
    // tile's bits do not depend on which thread has it.
    team.run([&](int ith, int n) {
        float* v = v_all + ith * 16 * band * in_;  // [16][tiles][in]
        float* m = m_all + ith * 16 * band * out_;  // [16][tiles][out]
        std::vector<float> rows(static_cast<size_t>(16 * std::max(in_, out_)));
        std::vector<float> spare(static_cast<size_t>(out_));  // the outputs past the map's last step
        const int64_t end = n_tiles * (ith + 1) / n;
        for (int64_t first = n_tiles * ith / n; first < end; first += band) {
            const int64_t tiles = std::min(band, end - first);
            // B^T d B per tile, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], d[a][b] the input
            // at frequency 2 tf - 1 + a and time 2 tt - 1 + b (zero outside the map).
            for (int64_t i = 0; i < tiles; ++i) {
                const int64_t tile = first + i;
                const int64_t t0 = 2 * (tile / tiles_f) - 1, f0 = 2 * (tile % tiles_f) - 1;
                const float* d[16];
                for (int a = 0; a < 4; ++a)
                    for (int b = 0; b < 4; ++b) {
                        const int64_t f = f0 + a, t = t0 + b;
                        d[a * 4 + b] = f < 0 || f >= F || t < 0 || t >= T ? zeros.data() : x + (t * F + f) * in_;
                    }
                float* r = rows.data();  // B^T d, [a][b][in]
                for (int b = 0; b < 4; ++b)
                    combine(d[b], d[4 + b], d[8 + b], d[12 + b], in_, r + b * in_, r + (4 + b) * in_,
                            r + (8 + b) * in_, r + (12 + b) * in_);
                for (int a = 0; a < 4; ++a) {
                    const float* ra = r + a * 4 * in_;
                    float* out[4];
                    for (int b = 0; b < 4; ++b) out[b] = v + ((a * 4 + b) * tiles + i) * in_;
                    combine(ra, ra + in_, ra + 2 * in_, ra + 3 * in_, in_, out[0], out[1], out[2], out[3]);
                }
            }
            for (int k = 0; k < 16; ++k)
                kernels_->conv.pointwise_conv_rows(v + k * tiles * in_, in_, u_.data() + k * u_stride_, out_, nullptr,
                                                   false, 0, tiles, m + k * tiles * out_);
            // A^T M A per tile, A^T = [1 1 1 0; 0 1 -1 -1]: the 2x2 outputs at frequency
            // 2 tf + p and time 2 tt + q (those inside the map).
            const int64_t stride = tiles * out_;
            for (int64_t i = 0; i < tiles; ++i) {
                const int64_t tile = first + i;
                const int64_t t0 = 2 * (tile / tiles_f), f0 = 2 * (tile % tiles_f);
                const float* mk = m + i * out_;
                float* r = rows.data();  // A^T M, [p][b][out]
                for (int b = 0; b < 4; ++b)
                    reduce(mk + b * stride, mk + (4 + b) * stride, mk + (8 + b) * stride, mk + (12 + b) * stride,
                           out_, r + b * out_, r + (4 + b) * out_);
                for (int p = 0; p < 2 && f0 + p < F; ++p) {
                    const float* rp = r + p * 4 * out_;
                    float* y0 = y + (t0 * F + f0 + p) * out_;
                    float* y1 = t0 + 1 < T ? y + ((t0 + 1) * F + f0 + p) * out_ : spare.data();
                    reduce(rp, rp + out_, rp + 2 * out_, rp + 3 * out_, out_, y0, y1);
                    finish(y0, bias, out_, relu);
                    finish(y1, bias, out_, relu);
                }
            }
        }
    });
}

}  // namespace pk::speaker
