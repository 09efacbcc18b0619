#include "model/speaker/identity_block_bands.h"

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

}  // namespace

bool identity_block_in_bands(const Conv2dGemm& conv1, const Conv2dGemm& conv2) {
    return conv1.winograd() && conv2.winograd() && conv1.in() == conv2.out();
}

void run_identity_block_in_bands(ThreadTeam& team, Arena& arena, const Conv2dGemm& conv1, const Conv2dGemm& conv2,
                                 const float* x, int64_t T, int64_t F, float* y) {
    const int64_t row = F * conv2.out();  // floats per time row of x, conv1's output and y
    for_bands(team, arena, (T + kBandRows - 1) / kBandRows, [&](ThreadTeam& t, Arena& ar, int64_t k0, int64_t k1) {
        ArenaScope scope(ar);
        // conv1's rows [h_begin, h_end): a band's and kHalo each side, clipped to the map.
        float* h = ar.alloc_array<float>(static_cast<size_t>((kBandRows + 2 * kHalo) * conv1.out() * F));
        int64_t h_begin = 0, h_end = 0;
        const int64_t h_row = F * conv1.out();
        for (int64_t k = k0; k < k1; ++k) {
            const int64_t t0 = k * kBandRows, t1 = std::min(T, t0 + kBandRows);
            const int64_t lo = std::max<int64_t>(0, t0 - kHalo), hi = std::min(T, t1 + kHalo);
            // The rows the band before computed past its end move to the front.
            const int64_t kept = h_begin <= lo && lo < h_end ? h_end - lo : 0;
            std::copy(h + (lo - h_begin) * h_row, h + (lo - h_begin + kept) * h_row, h);
            const int64_t from = lo + kept;  // a multiple of 4 (kHalo, kBandRows)
            conv1.forward_rows(t, ar, x + from * row, -from, T - from, hi - from, F, nullptr, h + kept * h_row,
                               /*relu=*/true);
            h_begin = lo;
            h_end = hi;
            conv2.forward_rows(t, ar, h + (t0 - lo) * h_row, lo - t0, hi - t0, t1 - t0, F, x + t0 * row, y + t0 * row,
                               /*relu=*/true);
        }
    });
}

}  // namespace pk::speaker
