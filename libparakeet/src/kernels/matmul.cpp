// matmul() driver: checks, activation packing / quantisation, cache blocking and the split
// over the thread team. The arithmetic lives in the micro-kernels (matmul_kernels_*.cpp).
#include "kernels/matmul.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/matmul_layout.h"
#include "kernels/matmul_q8_gemm.h"
#include "kernels/round_up.h"

namespace pk::kernels {

using namespace matmul_detail;

namespace {

// Cache blocking (Zen 2/3/4: 32 KiB L1d, >= 512 KiB L2 per core). A K slice of one weight
// panel (f32: kc x 16 floats = 16 KiB; q8_0 widened: 17 KiB) stays in L1 while the row panels
// of an A block (f32: 240 rows x 256 k = 240 KiB; q8_0: 256 rows x 512 k int16 = 256 KiB)
// stream from L2. The avx512 tiles over two panels read two such slices (f32: 32 KiB, which
// Zen 5's 48 KiB L1d holds; on a 32 KiB L1d they come from L2, sequentially). The K slicing is
// fixed (never derived from M or the team size): it is part of each output's summation order.
// Sizes picked by sweeping bench_matmul (docs/performance.md).
constexpr int64_t kKcF32 = 256;
constexpr int64_t kMcF32 = 240;      // multiple of kRowsF32
constexpr int64_t kMcQ8 = 256;       // multiple of kRowsQ8 and of kRowsQ8Vnni
// BF16: a K slice of 256 pairs (512 k) of one panel is 16 KiB, an A block 240 rows x 1 KiB.
constexpr int64_t kKcBf16Pairs = 256;
constexpr int64_t kMcBf16 = 240;     // multiple of kRowsBf16

// Work below these sizes is not split: a dispatch and a cold start on another core cost a few
// microseconds, which only pays for itself on bigger jobs.
constexpr double kMinFlopsPerChunk = 4.0e6;
constexpr int64_t kMinBytesPerMatvecChunk = 64 * 1024;
// Fewest tiles sharing an F32 weight slice for which it is copied to the thread's buffer.
constexpr int64_t kMinTilesPerCopy = 3;
// A chunk's share of the output: row panels [r0, r1) x column panels [j0, j1).
struct Share {
    int64_t r0, r1, j0, j1;
};

// Splits the tile grid into `chunks` contiguous shares along the dimension that balances
// better, columns on a tie: each thread then reads only its part of the weights and reuses
// each weight slice over all the rows (splitting rows measured ~20 % more CPU time).
struct Split {
    int64_t chunks;
    bool by_rows;
    int64_t row_panels, col_panels;

    Share share(int64_t i) const {
        const int64_t n = by_rows ? row_panels : col_panels;
        const int64_t b = n * i / chunks, e = n * (i + 1) / chunks;
        return by_rows ? Share{b, e, 0, col_panels} : Share{0, row_panels, b, e};
    }
};

Split choose_split(int team_size, int64_t row_panels, int64_t col_panels, double flops) {
    int64_t chunks = static_cast<int64_t>(flops / kMinFlopsPerChunk);
    // One share per thread, claimed dynamically (a late thread's share goes to whoever is
    // free). Two or four per thread cost 2-8 % on a quiet machine and gained nothing with a
    // busy neighbour (docs/performance.md, "Dynamic chunks").
    chunks = std::max<int64_t>(1, std::min<int64_t>(chunks, team_size));
    // Imbalance = largest share / average share; compare largest(R) / R with largest(C) / C.
    auto largest = [&](int64_t n) { return ceil_div(n, std::min(chunks, n)); };
    const bool by_rows = largest(row_panels) * col_panels < largest(col_panels) * row_panels;
    chunks = std::min(chunks, by_rows ? row_panels : col_panels);
    return Split{chunks, by_rows, row_panels, col_panels};
}

struct GemmShape {
    int64_t M, N;
    int64_t mr;         // rows per row panel
    int64_t k_units;    // K in the units the tile takes (floats, or Q8 blocks)
    int64_t kc;         // K slice, in the same units
    int64_t mc_panels;  // row panels per A block
    const PackedWeights* w;
    size_t unit_bytes;  // bytes of one K unit of a packed panel
    const float* bias;
    float* y;
    int64_t ldy;
};

// The blocked loop nest over one share. prepare_b(jr, pc, kc, tiles) returns the weight
// slice the next `tiles` tiles read; tile(rows, ir, pc, kc, b, c, ldc, bias, accumulate)
// computes one tile. Tiles of the last, partial column panel go through a 16-wide scratch
// tile so that they run the same code. pair_tile, where given (not nullptr), computes the
// tiles of two full panels jr, jr + 1 at once, pair_tile(rows, ir, pc, kc, b, b1, c, ldc, bias,
// accumulate) with b1 panel jr + 1's slice (prepare_b then must return pointers that stay
// valid for two panels); each output gets the same operations as through tile.
// While the tiles of one panel run, the next panel's slice is prefetched a little per tile:
// with few rows (M ~ 100) the weights are the big stream and would otherwise arrive from
// memory only when prepare_b asks for them.
template <class PrepareB, class Tile, class PairTile = std::nullptr_t>
void gemm_share(const GemmShape& s, const Share& sh, PrepareB&& prepare_b, Tile&& tile,
                PairTile&& pair_tile = nullptr) {
    constexpr bool kHasPairs = !std::is_same_v<std::decay_t<PairTile>, std::nullptr_t>;
    constexpr int64_t kMaxRows = std::max({kRowsF32, kRowsQ8, kRowsQ8Vnni, kRowsBf16, kRowsKq, kRowsKqVnni});
    alignas(64) float edge[kMaxRows * kPanel] = {};
    alignas(64) float edge_bias[kPanel];
    for (int64_t pc = 0; pc < s.k_units; pc += s.kc) {
        const int64_t kc = std::min(s.kc, s.k_units - pc);
        const bool accumulate = pc > 0;
        const float* bias = accumulate ? nullptr : s.bias;
        for (int64_t ic = sh.r0; ic < sh.r1; ic += s.mc_panels) {
            const int64_t ic_end = std::min(ic + s.mc_panels, sh.r1);
            for (int64_t jr = sh.j0; jr < sh.j1; ++jr) {
                const bool pair = kHasPairs && jr + 1 < sh.j1 && (jr + 2) * kPanel <= s.N;
                const auto* b = prepare_b(jr, pc, kc, ic_end - ic);
                const auto* b1 = pair ? prepare_b(jr + 1, pc, kc, ic_end - ic) : nullptr;
                const int64_t jn = jr + (pair ? 2 : 1);
                const uint8_t* next = jn < sh.j1 ? s.w->panel(jn) + pc * s.unit_bytes : nullptr;
                // After a pair, the next pair's second panel too.
                const uint8_t* next1 = pair && jn + 1 < sh.j1 ? s.w->panel(jn + 1) + pc * s.unit_bytes : nullptr;
                const int64_t next_lines = static_cast<int64_t>(kc * s.unit_bytes + 63) / 64;
                const int64_t col0 = jr * kPanel;
                const int64_t cols = std::min(kPanel, s.N - col0);
                const float* bias_j = bias ? bias + col0 : nullptr;
                if (bias_j && cols < kPanel) {
                    std::fill(edge_bias, edge_bias + kPanel, 0.0f);
                    std::copy(bias_j, bias_j + cols, edge_bias);
                    bias_j = edge_bias;
                }
                for (int64_t ir = ic; ir < ic_end; ++ir) {
                    if (next) {
                        const int64_t l0 = next_lines * (ir - ic) / (ic_end - ic);
                        const int64_t l1 = next_lines * (ir - ic + 1) / (ic_end - ic);
                        for (int64_t l = l0; l < l1; ++l) __builtin_prefetch(next + 64 * l, 0, 2);
                        if (next1) {
                            for (int64_t l = l0; l < l1; ++l) __builtin_prefetch(next1 + 64 * l, 0, 2);
                        }
                    }
                    const int64_t row0 = ir * s.mr;
                    const int64_t rows = std::min(s.mr, s.M - row0);
                    float* c = s.y + row0 * s.ldy + col0;
                    if constexpr (kHasPairs) {
                        if (pair) {
                            pair_tile(rows, ir, pc, kc, b, b1, c, s.ldy, bias_j, accumulate);
                            continue;
                        }
                    }
                    if (cols == kPanel) {
                        tile(rows, ir, pc, kc, b, c, s.ldy, bias_j, accumulate);
                        continue;
                    }
                    if (accumulate) {
                        for (int64_t r = 0; r < rows; ++r) {
                            std::copy(c + r * s.ldy, c + r * s.ldy + cols, edge + r * kPanel);
                        }
                    }
                    tile(rows, ir, pc, kc, b, edge, kPanel, bias_j, accumulate);
                    for (int64_t r = 0; r < rows; ++r) {
                        std::copy(edge + r * kPanel, edge + r * kPanel + cols, c + r * s.ldy);
                    }
                }
                if (pair) ++jr;
            }
        }
    }
}

void gemm_float(const MatmulKernels& kern, ThreadTeam& team, Arena& scratch, const float* x,
                int64_t M, int64_t K, const PackedWeights& w, const float* bias, float* y,
                int64_t ldy) {
    const int64_t mr = kRowsF32;
    const int64_t row_panels = ceil_div(M, mr);
    // Packed A, K slice by K slice (matmul_layout.h): slice pc starts at pc * mr * row_panels.
    float* a = scratch.alloc_array<float>(static_cast<size_t>(row_panels * mr * K));
    pack_slices(team, row_panels, mr, K, K, kKcF32, [&](int64_t i, int64_t pc, int64_t kc) {
        kern.pack_rows_f32(x + i * mr * K + pc, std::min(mr, M - i * mr), K, kc,
                           a + pc * mr * row_panels + i * mr * kc);
    });

    const Split split = choose_split(team.size(), row_panels, w.n_panels(), 2.0 * M * w.n() * K);
    const size_t unit = kPanel * (w.type() == WeightType::F16 ? sizeof(uint16_t) : sizeof(float));
    const GemmShape shape{M, w.n(), mr, K, kKcF32, kMcF32 / mr, &w, unit, bias, y, ldy};
    auto tile = [&](int64_t rows, int64_t ir, int64_t pc, int64_t kc, const float* b, float* c,
                    int64_t ldc, const float* bj, bool acc) {
        kern.tile_f32(rows, kc, a + pc * mr * row_panels + ir * mr * kc, b, c, ldc, bj, acc);
    };
    // Each K slice of a panel is copied (F32) or widened (F16) once into the thread's buffer,
    // then reused from L1 by every row panel of the A block. Reading the slice straight from
    // the packed weights measured ~25 % slower on big weights: the first tile of each panel
    // then stalls on L3 misses that a plain streaming copy does not suffer. With only a tile
    // or two per slice the copy costs more than it saves, and F32 reads the panel directly.
    // Two slices per thread: a pair of panels (tile_f32_pair) uses both, panel jr slot jr % 2.
    float* slices = scratch.alloc_array<float>(static_cast<size_t>(team.size() * 2 * kKcF32 * kPanel));
    const bool f16 = w.type() == WeightType::F16;
    team.run_chunks(split.chunks, [&](int64_t i, int t) {
        auto prepare_b = [&](int64_t jr, int64_t pc, int64_t kc, int64_t tiles) {
            float* buf = slices + (2 * t + jr % 2) * kKcF32 * kPanel;
            if (f16) {
                const uint16_t* src = reinterpret_cast<const uint16_t*>(w.panel(jr)) + pc * kPanel;
                kern.f16_to_f32(src, kc * kPanel, buf);
            } else {
                const float* src = reinterpret_cast<const float*>(w.panel(jr)) + pc * kPanel;
                if (tiles < kMinTilesPerCopy) return src;
                std::memcpy(buf, src, static_cast<size_t>(kc * kPanel) * sizeof(float));
            }
            return static_cast<const float*>(buf);
        };
        if (!kern.tile_f32_pair) {
            gemm_share(shape, split.share(i), prepare_b, tile);
            return;
        }
        auto pair_tile = [&](int64_t rows, int64_t ir, int64_t pc, int64_t kc, const float* b, const float* b1,
                             float* c, int64_t ldc, const float* bj, bool acc) {
            kern.tile_f32_pair(rows, kc, a + pc * mr * row_panels + ir * mr * kc, b, b1, c, ldc, bj, acc);
        };
        gemm_share(shape, split.share(i), prepare_b, tile, pair_tile);
    });
}

// Row panel i's K slice [pc, pc + kc) of the M rows x (row stride ldx) quantised into the int16
// panels of gemm_q8 (pc counts blocks).
void pack_q8_panel(const MatmulKernels& kern, const float* x, int64_t ldx, int64_t M, int64_t row_panels, int64_t i,
                   int64_t pc, int64_t kc, int16_t* aq, float* as) {
    const int64_t mr = kRowsQ8;
    const int64_t o = q8_slice_offset(row_panels, mr, i, pc, kc);
    kern.quantize_panel_q8(x + i * mr * ldx + pc * kQ8Block, std::min(mr, M - i * mr), ldx, kc, aq + o * kQ8Block,
                           as + o);
}

// The same for the int8 panels of gemm_q8_vnni, with their corrections.
void pack_q8_vnni_panel(const MatmulKernels& kern, const float* x, int64_t ldx, int64_t M, int64_t row_panels,
                        int64_t i, int64_t pc, int64_t kc, int8_t* aq, float* as, int32_t* ac) {
    const int64_t mr = kRowsQ8Vnni;
    const int64_t o = q8_slice_offset(row_panels, mr, i, pc, kc);
    kern.quantize_q8_vnni(x + i * mr * ldx + pc * kQ8Block, std::min(mr, M - i * mr), ldx, kc, mr,
                          aq + o * kQ8Block, as + o, ac + o);
}

// Q8_0 on the levels without VNNI: activations quantised into int16 panels, then the tiles
// (gemm_q8_packed).
void gemm_q8(const MatmulKernels& kern, ThreadTeam& team, Arena& scratch, const float* x,
             int64_t M, int64_t K, const PackedWeights& w, const float* bias, float* y,
             int64_t ldy) {
    const int64_t mr = kRowsQ8;
    const int64_t row_panels = ceil_div(M, mr);
    const int64_t nblocks = K / kQ8Block;
    // Quantised A, K slice by K slice (matmul_layout.h); pc counts blocks.
    int16_t* aq = scratch.alloc_array<int16_t>(static_cast<size_t>(row_panels * mr * K));
    float* as = scratch.alloc_array<float>(static_cast<size_t>(row_panels * mr * nblocks));
    pack_slices(team, row_panels, mr, K, nblocks, kKcQ8Blocks, [&](int64_t i, int64_t pc, int64_t kc) {
        pack_q8_panel(kern, x, K, M, row_panels, i, pc, kc, aq, as);
    });
    gemm_q8_packed(kern, team, scratch, aq, as, M, w, bias, y, ldy);
}

// Q8_0 on quad-layout weights with the VNNI tile: activations quantised into int8 panels with
// their corrections, then the tiles (gemm_q8_vnni_packed).
void gemm_q8_vnni(const MatmulKernels& kern, ThreadTeam& team, Arena& scratch, const float* x,
                  int64_t M, int64_t K, const PackedWeights& w, const float* bias, float* y,
                  int64_t ldy) {
    const int64_t mr = kRowsQ8Vnni;
    const int64_t row_panels = ceil_div(M, mr);
    const int64_t nblocks = K / kQ8Block;
    const size_t panel_blocks = static_cast<size_t>(row_panels * mr * nblocks);
    int8_t* aq = scratch.alloc_array<int8_t>(panel_blocks * kQ8Block);
    float* as = scratch.alloc_array<float>(panel_blocks);
    int32_t* ac = scratch.alloc_array<int32_t>(panel_blocks);
    pack_slices(team, row_panels, mr, K, nblocks, kKcQ8Blocks, [&](int64_t i, int64_t pc, int64_t kc) {
        pack_q8_vnni_panel(kern, x, K, M, row_panels, i, pc, kc, aq, as, ac);
    });
    gemm_q8_vnni_packed(kern, team, aq, as, ac, M, w, bias, y, ldy);
}

// Unsigned-form weights (Q4_0 ... Q6_K), for any M: activations quantised as for the VNNI Q8_0
// GEMM plus their block sums; each K slice of a weight panel decoded once into units in the
// thread's buffer and reused by every row panel of the A block. Decoding is the price of
// keeping the stored 4.5-6.5 bits per weight resident; it is shared by all the rows, and a
// matrix-vector product (M = 1) pays it for one row.
void gemm_kq(const MatmulKernels& kern, ThreadTeam& team, Arena& scratch, const float* x, int64_t M,
             int64_t K, const PackedWeights& w, const float* bias, float* y, int64_t ldy) {
    const int64_t mr = kern.kq_rows;
    const int64_t row_panels = ceil_div(M, mr);
    const int64_t nblocks = K / kQ8Block;
    const size_t panel_blocks = static_cast<size_t>(row_panels * mr * nblocks);
    int8_t* aq = scratch.alloc_array<int8_t>(panel_blocks * kQ8Block);
    float* as = scratch.alloc_array<float>(panel_blocks);
    float* ac = scratch.alloc_array<float>(panel_blocks * kKqCorrPerBlock);
    auto at = [&](int64_t ir, int64_t pc, int64_t kc) { return (pc * row_panels + ir * kc) * mr; };
    pack_slices(team, row_panels, mr, K, nblocks, kKcQ8Blocks, [&](int64_t i, int64_t pc, int64_t kc) {
        const int64_t o = at(i, pc, kc);
        kern.quantize_kq(x + i * mr * K + pc * kQ8Block, std::min(mr, M - i * mr), K, kc, mr, aq + o * kQ8Block,
                         as + o, ac + o * kKqCorrPerBlock);
    });

    const Split split = choose_split(team.size(), row_panels, w.n_panels(), 2.0 * M * w.n() * K);
    const size_t raw_unit_bytes = weight_row_bytes(w.type(), K) * kPanel / static_cast<size_t>(nblocks);
    const GemmShape shape{M, w.n(), mr, nblocks, kKcQ8Blocks, kMcQ8 / mr, &w, raw_unit_bytes, bias, y, ldy};
    const bool halves = w.type() == WeightType::Q6_K;
    uint8_t* slices = static_cast<uint8_t*>(
        scratch.alloc(static_cast<size_t>(team.size() * kKcQ8Blocks) * kKqUnitBytes));
    team.run_chunks(split.chunks, [&](int64_t i, int t) {
        uint8_t* buf = slices + static_cast<size_t>(t * kKcQ8Blocks) * kKqUnitBytes;
        auto prepare_b = [&](int64_t jr, int64_t pc, int64_t kc, int64_t) {
            kern.decode_kq_units(w.type(), w.panel(jr), pc, kc, buf);
            return static_cast<const uint8_t*>(buf);
        };
        auto tile = [&](int64_t rows, int64_t ir, int64_t pc, int64_t kc, const uint8_t* b, float* c,
                        int64_t ldc, const float* bj, bool acc) {
            const int64_t o = at(ir, pc, kc);
            kern.tile_kq(rows, kc, halves, aq + o * kQ8Block, as + o, ac + o * kKqCorrPerBlock, b, c, ldc, bj, acc);
        };
        gemm_share(shape, split.share(i), prepare_b, tile);
    });
}

// BF16 weights: activations rounded to bf16 pairs K slice by K slice (as gemm_float packs
// floats), tiles reading the packed weights as they are (the prefetch of gemm_share brings
// the next panel's slice).
void gemm_bf16(const MatmulKernels& kern, ThreadTeam& team, Arena& scratch, const float* x,
               int64_t M, int64_t K, const PackedWeights& w, const float* bias, float* y,
               int64_t ldy) {
    const int64_t mr = kRowsBf16;
    const int64_t row_panels = ceil_div(M, mr);
    const int64_t pairs = (K + 1) / 2;
    uint32_t* a = scratch.alloc_array<uint32_t>(static_cast<size_t>(row_panels * mr * pairs));
    auto a_at = [&](int64_t ir, int64_t pc, int64_t kc) { return a + (pc * row_panels + ir * kc) * mr; };
    pack_slices(team, row_panels, mr, K, pairs, kKcBf16Pairs, [&](int64_t i, int64_t pc, int64_t kc) {
        kern.pack_rows_bf16(x + i * mr * K + 2 * pc, std::min(mr, M - i * mr), K, kc,
                            std::min(2 * kc, K - 2 * pc), a_at(i, pc, kc));
    });

    const Split split = choose_split(team.size(), row_panels, w.n_panels(), 2.0 * M * w.n() * K);
    const GemmShape shape{M, w.n(), mr, pairs, kKcBf16Pairs, kMcBf16 / mr, &w, kBf16PairBytes, bias, y, ldy};
    team.run_chunks(split.chunks, [&](int64_t i, int) {
        auto prepare_b = [&](int64_t jr, int64_t pc, int64_t, int64_t) {
            return reinterpret_cast<const uint16_t*>(w.panel(jr) + pc * kBf16PairBytes);
        };
        auto tile = [&](int64_t rows, int64_t ir, int64_t pc, int64_t kc, const uint16_t* b,
                        float* c, int64_t ldc, const float* bj, bool acc) {
            kern.tile_bf16(rows, kc, a_at(ir, pc, kc), b, c, ldc, bj, acc);
        };
        gemm_share(shape, split.share(i), prepare_b, tile);
    });
}

// Few rows (decoder steps, M == 1): one streaming pass over the weights, each row by the
// matrix-vector kernel, split by panels once there is enough of them. All rows of a panel are
// done while the panel is in cache, so the weights are read from memory once.
// bias_ld: the bias of row m starts at bias + m * bias_ld (0: one bias for every row).
void matvec_rows(const MatmulKernels& kern, ThreadTeam& team, Arena& scratch, const float* x,
                 int64_t M, int64_t K, const PackedWeights& w, const float* bias, float* y,
                 int64_t ldy, int64_t bias_ld = 0) {
    const int64_t N = w.n();
    const int64_t panels = w.n_panels();
    const int64_t panel_bytes = panels > 1 ? w.panel(1) - w.panel(0) : 1;
    const int64_t grain = std::max<int64_t>(1, kMinBytesPerMatvecChunk / (panel_bytes * M));

    const int64_t nblocks = K / kQ8Block;
    const bool vnni = w.type() == WeightType::Q8_0 && kern.matvec_q8_vnni;
    int16_t* xq = nullptr;
    int8_t* xq8 = nullptr;
    float* xs = nullptr;
    int32_t* xc = nullptr;
    const int64_t pairs = (K + 1) / 2;
    uint32_t* xp = nullptr;
    if (w.type() == WeightType::BF16) {
        xp = scratch.alloc_array<uint32_t>(static_cast<size_t>(M * pairs));
        for (int64_t m = 0; m < M; ++m) kern.row_to_bf16(x + m * K, K, xp + m * pairs);
    }
    if (w.type() == WeightType::Q8_0) {
        xs = scratch.alloc_array<float>(static_cast<size_t>(M * nblocks));
        if (vnni) {
            xq8 = scratch.alloc_array<int8_t>(static_cast<size_t>(M * K));
            xc = scratch.alloc_array<int32_t>(static_cast<size_t>(M * nblocks));
        } else {
            xq = scratch.alloc_array<int16_t>(static_cast<size_t>(M * K));
        }
        for (int64_t m = 0; m < M; ++m) {
            if (vnni) {
                kern.quantize_q8_vnni(x + m * K, 1, K, nblocks, 1, xq8 + m * K, xs + m * nblocks,
                                      xc + m * nblocks);
            } else {
                kern.quantize_row_q8(x + m * K, K, xq + m * K, xs + m * nblocks);
            }
        }
    }
    // A Q8_0 row sums its K slices (kKcQ8Blocks blocks) as the GEMM tiles do: the first
    // slice's sum plus the bias, then each later slice's sum added. The tiles sum a slice's
    // blocks in the kernel's order too, so the two paths give a row the same bits.
    auto q8_row = [&](int64_t m, int64_t p, const float* bias_p, float* out) {
        alignas(64) float part[kPanel];
        const int64_t cols = std::min(kPanel, N - p * kPanel);
        for (int64_t pc = 0; pc < nblocks; pc += kKcQ8Blocks) {
            const int64_t kc = std::min(kKcQ8Blocks, nblocks - pc);
            const uint8_t* panel = w.panel(p) + pc * kQ8PanelBlockBytes;
            const int64_t at = m * nblocks + pc;
            if (vnni) kern.matvec_q8_vnni(xq8 + at * kQ8Block, xs + at, xc + at, kc, panel, part);
            else kern.matvec_q8(xq + at * kQ8Block, xs + at, kc, panel, part);
            for (int64_t j = 0; j < cols; ++j) {
                out[j] = pc > 0 ? out[j] + part[j] : bias_p ? part[j] + bias_p[j] : part[j];
            }
        }
    };
    parallel_for(team, panels, grain, [&](int64_t b, int64_t e) {
        alignas(64) float out[kPanel];
        for (int64_t p = b; p < e; ++p) {
            const int64_t col0 = p * kPanel;
            const int64_t cols = std::min(kPanel, N - col0);
            for (int64_t m = 0; m < M; ++m) {
                const float* bias_m = bias ? bias + m * bias_ld : nullptr;
                switch (w.type()) {
                    case WeightType::F32:
                        kern.matvec_f32(x + m * K, K, reinterpret_cast<const float*>(w.panel(p)),
                                        out);
                        break;
                    case WeightType::F16:
                        kern.matvec_f16(x + m * K, K, reinterpret_cast<const uint16_t*>(w.panel(p)),
                                        out);
                        break;
                    case WeightType::Q8_0:
                        q8_row(m, p, bias_m ? bias_m + col0 : nullptr, out);
                        break;
                    case WeightType::BF16:
                        kern.matvec_bf16(xp + m * pairs, pairs,
                                         reinterpret_cast<const uint16_t*>(w.panel(p)), out);
                        break;
                    default:  // the unsigned-form types never come here (gemm_kq)
                        break;
                }
                float* ym = y + m * ldy + col0;
                if (w.type() == WeightType::Q8_0) {
                    std::copy(out, out + cols, ym);  // q8_row added the bias
                } else {
                    for (int64_t j = 0; j < cols; ++j) ym[j] = bias_m ? out[j] + bias_m[col0 + j] : out[j];
                }
            }
        }
    });
}

// The tiles of gemm_q8_packed over one share of the output, each K slice of a weight panel
// widened into buf (kKcQ8Blocks * kQ8WideBlockBytes bytes, the running thread's).
void q8_share(const MatmulKernels& kern, const int16_t* aq, const float* as, int64_t M, const PackedWeights& w,
              const float* bias, float* y, int64_t ldy, const Share& share, uint8_t* buf) {
    const int64_t mr = kRowsQ8;
    const int64_t row_panels = ceil_div(M, mr);
    const GemmShape shape{M, w.n(), mr, w.k() / kQ8Block, kKcQ8Blocks, kMcQ8 / mr, &w, kQ8PanelBlockBytes,
                          bias, y, ldy};
    auto prepare_b = [&](int64_t jr, int64_t pc, int64_t kc, int64_t) {
        kern.widen_q8(w.panel(jr) + pc * kQ8PanelBlockBytes, kc, buf);
        return static_cast<const uint8_t*>(buf);
    };
    auto tile = [&](int64_t rows, int64_t ir, int64_t pc, int64_t kc, const uint8_t* b, float* c, int64_t ldc,
                    const float* bj, bool acc) {
        const int64_t o = q8_slice_offset(row_panels, mr, ir, pc, kc);
        kern.tile_q8(rows, kc, aq + o * kQ8Block, as + o, b, c, ldc, bj, acc);
    };
    gemm_share(shape, share, prepare_b, tile);
}

// The tiles of gemm_q8_vnni_packed over one share of the output: they read the packed weights
// as they are.
void q8_vnni_share(const MatmulKernels& kern, const int8_t* aq, const float* as, const int32_t* ac, int64_t M,
                   const PackedWeights& w, const float* bias, float* y, int64_t ldy, const Share& share) {
    const int64_t mr = kRowsQ8Vnni;
    const int64_t row_panels = ceil_div(M, mr);
    auto at = [&](int64_t ir, int64_t pc, int64_t kc) { return q8_slice_offset(row_panels, mr, ir, pc, kc); };
    const GemmShape shape{M, w.n(), mr, w.k() / kQ8Block, kKcQ8Blocks, kMcQ8 / mr, &w, kQ8PanelBlockBytes,
                          bias, y, ldy};
    auto prepare_b = [&](int64_t jr, int64_t pc, int64_t, int64_t) { return w.panel(jr) + pc * kQ8PanelBlockBytes; };
    auto tile = [&](int64_t rows, int64_t ir, int64_t pc, int64_t kc, const uint8_t* b, float* c, int64_t ldc,
                    const float* bj, bool acc) {
        const int64_t o = at(ir, pc, kc);
        kern.tile_q8_vnni(rows, kc, aq + o * kQ8Block, as + o, ac + o, b, c, ldc, bj, acc);
    };
    if (!kern.tile_q8_vnni_pair) {
        gemm_share(shape, share, prepare_b, tile);
        return;
    }
    auto pair_tile = [&](int64_t rows, int64_t ir, int64_t pc, int64_t kc, const uint8_t* b, const uint8_t* b1,
                         float* c, int64_t ldc, const float* bj, bool acc) {
        const int64_t o = at(ir, pc, kc);
        kern.tile_q8_vnni_pair(rows, kc, aq + o * kQ8Block, as + o, ac + o, b, b1, c, ldc, bj, acc);
    };
    gemm_share(shape, share, prepare_b, tile, pair_tile);
}

// Where matmul_q8_solo's scratch keeps the panels of M rows of K values (base null: only the
// size): the VNNI panels with their corrections, or the int16 ones and a widened weight slice.
struct SoloQ8Scratch {
    int8_t* aq8 = nullptr;
    int16_t* aq16 = nullptr;
    float* as = nullptr;
    int32_t* ac = nullptr;
    uint8_t* buf = nullptr;
    size_t bytes = 0;

    SoloQ8Scratch(void* base, int64_t M, int64_t K, bool vnni) {
        const int64_t mr = vnni ? kRowsQ8Vnni : kRowsQ8;
        const size_t values = static_cast<size_t>(ceil_div(M, mr) * mr * K), blocks = values / kQ8Block;
        auto take = [&](size_t n) {  // each piece 64-byte aligned, as an arena's: the panels take aligned loads
            uint8_t* p = base == nullptr ? nullptr : static_cast<uint8_t*>(base) + bytes;
            bytes += static_cast<size_t>(round_up(static_cast<int64_t>(n), static_cast<int64_t>(Arena::kAlignment)));
            return p;
        };
        as = reinterpret_cast<float*>(take(blocks * sizeof(float)));
        if (vnni) {
            aq8 = reinterpret_cast<int8_t*>(take(values));
            ac = reinterpret_cast<int32_t*>(take(blocks * sizeof(int32_t)));
        } else {
            aq16 = reinterpret_cast<int16_t*>(take(values * sizeof(int16_t)));
            buf = take(static_cast<size_t>(kKcQ8Blocks) * kQ8WideBlockBytes);
        }
    }
};

}  // namespace

namespace matmul_detail {

// The tile loop of gemm_q8: each K slice of a panel is widened to int16 once into the thread's
// buffer, then reused from L1 by every row panel of the A block (see matmul_kernels_avx2.cpp).
void gemm_q8_packed(const MatmulKernels& kern, ThreadTeam& team, Arena& scratch, const int16_t* aq, const float* as,
                    int64_t M, const PackedWeights& w, const float* bias, float* y, int64_t ldy) {
    const Split split = choose_split(team.size(), ceil_div(M, kRowsQ8), w.n_panels(), 2.0 * M * w.n() * w.k());
    uint8_t* slices = static_cast<uint8_t*>(
        scratch.alloc(static_cast<size_t>(team.size() * kKcQ8Blocks) * kQ8WideBlockBytes));
    team.run_chunks(split.chunks, [&](int64_t i, int t) {
        uint8_t* buf = slices + static_cast<size_t>(t * kKcQ8Blocks) * kQ8WideBlockBytes;
        q8_share(kern, aq, as, M, w, bias, y, ldy, split.share(i), buf);
    });
}

// The tile loop of gemm_q8_vnni. Same K slices as gemm_q8_packed (they fix each output's float
// summation order, which the levels share); the tile reads the packed weights as they are, so
// there is no per-slice widening.
void gemm_q8_vnni_packed(const MatmulKernels& kern, ThreadTeam& team, const int8_t* aq,
                         const float* as, const int32_t* ac, int64_t M, const PackedWeights& w, const float* bias,
                         float* y, int64_t ldy) {
    const Split split = choose_split(team.size(), ceil_div(M, kRowsQ8Vnni), w.n_panels(), 2.0 * M * w.n() * w.k());
    team.run_chunks(split.chunks, [&](int64_t i, int) {
        q8_vnni_share(kern, aq, as, ac, M, w, bias, y, ldy, split.share(i));
    });
}

int64_t checked_ldy(const char* entry, int64_t M, int64_t K, const PackedWeights& w, int64_t ldy) {
    // The message is built only on failure: this check runs on every product.
    const auto fail = [entry](const char* what) { throw std::invalid_argument(std::string(entry) + what); };
    if (K != w.k()) fail(": K does not match the weight");
    if (M < 0) fail(": negative M");
    if (ldy < 0) ldy = w.n();
    if (ldy < w.n()) fail(": ldy < N");
    return ldy;
}

}  // namespace matmul_detail

bool path_invariant(WeightType type) { return type == WeightType::Q8_0 || is_unsigned_form(type); }

void matmul(ThreadTeam& team, Arena& scratch, const float* x, int64_t M, int64_t K,
            const PackedWeights& w, const float* bias, float* y, int64_t ldy, MatmulPath path) {
    ldy = checked_ldy("matmul", M, K, w, ldy);
    if (M == 0) return;
    // The packer and the table agree on the Q8_0 layout through q8_uses_quads(w.level()) and
    // q8_uses_mmla(w.level()).
    const MatmulKernels& kern = w.kernels();
    ArenaScope scope(scratch);
    if (is_unsigned_form(w.type())) {
        gemm_kq(kern, team, scratch, x, M, K, w, bias, y, ldy);
    } else if ((path == MatmulPath::Auto ? auto_path(M) : path) == MatmulPath::Matvec) {
        matvec_rows(kern, team, scratch, x, M, K, w, bias, y, ldy);
    } else if (w.type() == WeightType::Q8_0 && kern.tile_q8_vnni) {
        gemm_q8_vnni(kern, team, scratch, x, M, K, w, bias, y, ldy);
    } else if (w.type() == WeightType::Q8_0) {
        gemm_q8(kern, team, scratch, x, M, K, w, bias, y, ldy);
    } else if (w.type() == WeightType::BF16) {
        gemm_bf16(kern, team, scratch, x, M, K, w, bias, y, ldy);
    } else {
        gemm_float(kern, team, scratch, x, M, K, w, bias, y, ldy);
    }
}

void matvec_row_bias(ThreadTeam& team, Arena& scratch, const float* x, int64_t M, int64_t K,
                     const PackedWeights& w, const float* row_bias, float* y) {
    if (K != w.k()) throw std::invalid_argument("matmul: K does not match the weight");
    if (M <= 0) return;
    if (is_unsigned_form(w.type())) {  // one kernel for every M (gemm_kq): row by row
        for (int64_t m = 0; m < M; ++m)
            matmul(team, scratch, x + m * K, 1, K, w, row_bias + m * w.n(), y + m * w.n());
        return;
    }
    ArenaScope scope(scratch);
    matvec_rows(w.kernels(), team, scratch, x, M, K, w, row_bias, y, w.n(), w.n());
}

size_t matmul_q8_solo_scratch_bytes(int64_t M, const PackedWeights& w) {
    return SoloQ8Scratch(nullptr, M, w.k(), w.kernels().tile_q8_vnni != nullptr).bytes;
}

void matmul_q8_solo(void* scratch, const float* x, int64_t ldx, int64_t M, int64_t K, const PackedWeights& w,
                    const float* bias, float* y, int64_t ldy) {
    if (w.type() != WeightType::Q8_0) throw std::invalid_argument("matmul_q8_solo: the weights are not Q8_0");
    ldy = checked_ldy("matmul_q8_solo", M, K, w, ldy);
    if (ldx < K) throw std::invalid_argument("matmul_q8_solo: ldx < K");
    if (M == 0) return;
    const MatmulKernels& kern = w.kernels();
    const bool vnni = kern.tile_q8_vnni != nullptr;
    const SoloQ8Scratch s(scratch, M, K, vnni);
    const int64_t row_panels = ceil_div(M, vnni ? kRowsQ8Vnni : kRowsQ8), nblocks = K / kQ8Block;
    // matmul()'s packing and tiles, its slices in its order, all on this thread.
    for (int64_t i = 0; i < row_panels; ++i)
        for (int64_t pc = 0; pc < nblocks; pc += kKcQ8Blocks) {
            const int64_t kc = std::min(kKcQ8Blocks, nblocks - pc);
            if (vnni)
                pack_q8_vnni_panel(kern, x, ldx, M, row_panels, i, pc, kc, s.aq8, s.as, s.ac);
            else
                pack_q8_panel(kern, x, ldx, M, row_panels, i, pc, kc, s.aq16, s.as);
        }
    const Share all{0, row_panels, 0, w.n_panels()};
    if (vnni)
        q8_vnni_share(kern, s.aq8, s.as, s.ac, M, w, bias, y, ldy, all);
    else
        q8_share(kern, s.aq16, s.as, M, w, bias, y, ldy, all, s.buf);
}

}  // namespace pk::kernels
