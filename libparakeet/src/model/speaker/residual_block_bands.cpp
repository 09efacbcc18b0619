#include "model/speaker/residual_block_bands.h"

#include <algorithm>

#include "model/speaker/band_workers.h"

namespace pk::speaker {

namespace {

// Output rows per band: a row is 10 KB at every stage of ResNet34 (F halves where C doubles);
// 16 and 32 measured alike.
constexpr int64_t kBandRows = 16;
// conv1's rows past each end of a band that conv2 reads (one), widened to a Winograd tile's 4
// rows so that conv1's tiles sit where the whole map's do.
constexpr int64_t kHalo = 4;

bool is_3x3_pad_1(const Conv2dGemm& c, int stride) {
    const ConvGeometry& g = c.geometry();
    return c.kernel_t() == 3 && c.kernel_f() == 3 && g.pad_t == 1 && g.pad_f == 1 && g.dilation_t == 1 &&
           g.stride_t == stride && g.stride_f == stride;
}

// conv1's output rows [r0, r1) of the map x [T, F, in] into out (rows of conv1.out_f(F) x out
// channels), ReLU'd. A Winograd conv1 (r0 on the tile grid) runs on the rows it reads; another
// runs on the input rows from those of output row r0 - 1 on, whose first tap falls before them
// (it reads zeros there) and which is dropped, so that each kept row reads its own rows.
void conv1_rows(ThreadTeam& team, Arena& arena, const Conv2dGemm& conv1, const float* x, int64_t T, int64_t F,
                int64_t r0, int64_t r1, float* out) {
    const int64_t in_row = F * conv1.in(), out_row = conv1.out_f(F) * conv1.out();
    if (conv1.winograd()) {
        conv1.forward_rows(team, arena, x + r0 * in_row, -r0, T - r0, r1 - r0, F, nullptr, out, /*relu=*/true);
        return;
    }
    ArenaScope scope(arena);
    const int64_t s = conv1.geometry().stride_t, dropped = r0 > 0 ? 1 : 0;
    const int64_t s0 = s * (r0 - dropped), s1 = std::min(T, s * (r1 - 1) + 2);
    float* rows = arena.alloc_array<float>(static_cast<size_t>(conv1.out_t(s1 - s0) * out_row));
    conv1.forward(team, arena, x + s0 * in_row, s1 - s0, F, rows, /*relu=*/true);
    std::copy(rows + dropped * out_row, rows + (dropped + r1 - r0) * out_row, out);
}

}  // namespace

bool runs_in_bands(const ResidualBlock& b) {
    const int s = b.conv1.geometry().stride_t;
    if (!b.conv2.winograd() || !is_3x3_pad_1(b.conv1, s) || b.conv2.in() != b.conv1.out()) return false;
    if (b.down == nullptr) return s == 1 && b.conv1.in() == b.conv2.out();
    const ConvGeometry& g = b.down->geometry();
    return b.down->kernel_t() == 1 && b.down->kernel_f() == 1 && g.stride_t == s && g.stride_f == s && g.pad_t == 0 &&
           g.pad_f == 0 && b.down->in() == b.conv1.in() && b.down->out() == b.conv2.out();
}

void run_residual_block_in_bands(ThreadTeam& team, Arena& arena, const ResidualBlock& b, const float* x, int64_t T,
                                 int64_t F, float* y) {
    const int64_t To = b.conv1.out_t(T), Fo = b.conv1.out_f(F), s = b.conv1.geometry().stride_t;
    const int64_t in_row = F * b.conv1.in(), h_row = Fo * b.conv1.out(), y_row = Fo * b.conv2.out();
    for_bands(team, arena, (To + kBandRows - 1) / kBandRows, [&](ThreadTeam& t, Arena& ar, int64_t k0, int64_t k1) {
        ArenaScope scope(ar);
        // conv1's rows [h_begin, h_end): a band's and kHalo each side, clipped to the map.
        float* h = ar.alloc_array<float>(static_cast<size_t>((kBandRows + 2 * kHalo) * h_row));
        float* shortcut = b.down ? ar.alloc_array<float>(static_cast<size_t>(kBandRows * y_row)) : nullptr;
        int64_t h_begin = 0, h_end = 0;
        for (int64_t k = k0; k < k1; ++k) {
            const int64_t t0 = k * kBandRows, t1 = std::min(To, t0 + kBandRows);
            const int64_t lo = std::max<int64_t>(0, t0 - kHalo), hi = std::min(To, t1 + kHalo);
            // The rows the band before computed past its end move to the front.
            const int64_t kept = h_begin <= lo && lo < h_end ? h_end - lo : 0;
            std::copy(h + (lo - h_begin) * h_row, h + (lo - h_begin + kept) * h_row, h);
            const int64_t from = lo + kept;  // a multiple of 4 (kHalo, kBandRows)
            if (from < hi) conv1_rows(t, ar, b.conv1, x, T, F, from, hi, h + kept * h_row);
            h_begin = lo;
            h_end = hi;
            const float* residual = x + t0 * in_row;  // the identity: x's rows are y's
            if (b.down != nullptr) {  // its output row r reads input row s r
                b.down->forward(t, ar, x + t0 * s * in_row, (t1 - t0 - 1) * s + 1, F, shortcut, /*relu=*/false);
                residual = shortcut;
            }
            b.conv2.forward_rows(t, ar, h + (t0 - lo) * h_row, lo - t0, hi - t0, t1 - t0, Fo, residual, y + t0 * y_row,
                                 /*relu=*/true);
        }
    });
}

}  // namespace pk::speaker
