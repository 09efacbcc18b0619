#include "model/speaker/winograd_conv3x3.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/conv_pointwise.h"
#include "kernels/quantize_q8_0.h"
#include "model/layers/q8_at_load.h"

namespace pk::speaker {

namespace {

// A thread transforms its tiles a band at a time, the band's transformed inputs (or products)
// about this many floats (512 KiB), so that they stay in its core's cache for the products.
constexpr int64_t kBandValues = int64_t{1} << 17;
// Products per tile: the 6x6 positions of a transformed tile.
constexpr int kPositions = 36;

// Winograd's G for F(4x4, 3x3): [6, 3].
constexpr double kG[6][3] = {{1.0 / 4, 0, 0},
                             {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                             {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                             {1.0 / 24, 1.0 / 12, 1.0 / 6},
                             {1.0 / 24, -1.0 / 12, 1.0 / 6},
                             {0, 0, 1}};

// G g G^T of one 3x3 kernel g (row-major): u[a * 6 + b].
void transform_kernel(const float* g, double u[36]) {
    double gg[6][3];  // G g
    for (int a = 0; a < 6; ++a)
        for (int j = 0; j < 3; ++j) gg[a][j] = kG[a][0] * g[j] + kG[a][1] * g[3 + j] + kG[a][2] * g[6 + j];
    for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b) u[a * 6 + b] = gg[a][0] * kG[b][0] + gg[a][1] * kG[b][1] + gg[a][2] * kG[b][2];
}

}  // namespace

bool WinogradConv3x3::int8_pays(IsaLevel level) {
    return kernels::kernel_table(level).matmul.tile_q8_vnni != nullptr;
}

WinogradConv3x3::WinogradConv3x3(const float* weight, int64_t out, int64_t in, IsaLevel level, Products products)
    : kernels_(&kernels::kernel_table(level)), in_(in), out_(out) {
    if (products == Products::Q8_0 && in % kernels::kQ8_0BlockValues != 0)
        throw std::invalid_argument("WinogradConv3x3: Q8_0 products need a multiple of 32 input channels, not " +
                                    std::to_string(in));
    std::vector<float> u(static_cast<size_t>(kPositions * out * in));  // [36][out][in]
    std::vector<float> row(static_cast<size_t>(kPositions * in));      // one output's [36][in]
    double t[kPositions];
    for (int64_t o = 0; o < out; ++o) {
        // Through a row of one output: 36 writes per kernel spread over all of u took a third
        // of ResNet34's load time (330 ms against 215).
        for (int64_t c = 0; c < in; ++c) {
            transform_kernel(weight + (o * in + c) * 9, t);
            for (int k = 0; k < kPositions; ++k) row[k * in + c] = static_cast<float>(t[k]);
        }
        for (int k = 0; k < kPositions; ++k)
            std::copy_n(row.data() + k * in, in, u.data() + (k * out + o) * in);
    }
    if (products == Products::Q8_0) {
        uq_.reserve(kPositions);
        for (int k = 0; k < kPositions; ++k) uq_.push_back(q8_0_at_load(u.data() + k * out * in, out, in, level));
        return;
    }
    u_stride_ = kernels::pointwise_conv_packed_size(in, out);
    u_.resize(static_cast<size_t>(kPositions * u_stride_));
    for (int k = 0; k < kPositions; ++k)
        kernels::pointwise_conv_pack_weight(u.data() + k * out * in, in, out, u_.data() + k * u_stride_);
}

size_t WinogradConv3x3::scratch_bytes(int64_t tiles) const {
    return uq_.empty() ? 0 : kernels::matmul_q8_solo_scratch_bytes(tiles, uq_.front());
}

kernels::WinogradF4Layout WinogradConv3x3::layout(int64_t tiles, int64_t channels) const {
    if (uq_.empty()) return {tiles * channels, channels};
    return {channels, kPositions * channels};
}

void WinogradConv3x3::products(const float* v, int64_t tiles, void* scratch, float* m) const {
    const kernels::WinogradF4Layout lv = layout(tiles, in_), lm = layout(tiles, out_);
    for (int j = 0; j < kPositions; ++j) {
        const float* vj = v + j * lv.position;
        float* mj = m + j * lm.position;
        if (uq_.empty())
            kernels_->conv.pointwise_conv_rows(vj, in_, u_.data() + j * u_stride_, out_, nullptr, false, 0, tiles, mj);
        else
            kernels::matmul_q8_solo(scratch, vj, lv.tile, tiles, in_, uq_[j], nullptr, mj, lm.tile);
    }
}

void WinogradConv3x3::forward_rows(ThreadTeam& team, Arena& arena, const float* x, int64_t t_begin, int64_t t_end,
                                   int64_t rows, int64_t F, const float* bias, const float* residual, float* y,
                                   bool relu) const {
    ArenaScope scope(arena);
    const int64_t n_tiles = (rows + 3) / 4 * ((F + 3) / 4);
    const int64_t channels = std::max(in_, out_);
    const int64_t band = std::max<int64_t>(16, kBandValues / (kPositions * channels));
    const int nth = team.size();
    // Per thread: the transformed tiles of a band, their products and the transforms' scratch.
    float* v_all = arena.alloc_array<float>(static_cast<size_t>(nth * kPositions * band * in_));
    float* m_all = arena.alloc_array<float>(static_cast<size_t>(nth * kPositions * band * out_));
    float* work_all = arena.alloc_array<float>(static_cast<size_t>(nth * kernels::winograd_f4_work_floats(channels)));
    const size_t scratch = scratch_bytes(band);
    uint8_t* scratch_all = arena.alloc_array<uint8_t>(nth * scratch);
    const kernels::ConvKernels& k = kernels_->conv;
    // A band of tiles is a chunk, claimed by whichever thread is free (the transforms wait on
    // memory unevenly: a static split left one thread idle at the end of each convolution),
    // and runs every stage on the thread that claimed it: one dispatch per convolution, and a
    // tile's bits do not depend on which thread has it.
    team.run_chunks((n_tiles + band - 1) / band, [&](int64_t chunk, int t) {
        float* v = v_all + t * kPositions * band * in_;  // 36 x tiles x in (layout())
        float* m = m_all + t * kPositions * band * out_;  // 36 x tiles x out
        float* work = work_all + t * kernels::winograd_f4_work_floats(channels);
        const int64_t first = chunk * band, tiles = std::min(band, n_tiles - first);
        k.winograd_f4_input(x, t_begin, t_end, F, in_, first, tiles, layout(tiles, in_), work, v);
        products(v, tiles, scratch_all + t * scratch, m);
        k.winograd_f4_output(m, layout(tiles, out_), rows, F, out_, first, tiles, bias, residual, relu, work, y);
    });
}

}  // namespace pk::speaker
