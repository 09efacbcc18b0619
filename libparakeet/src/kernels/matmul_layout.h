// Internal to the matmul kernels: the packed layouts shared by the weight packer, the driver
// (matmul.cpp) and the micro-kernels (matmul_kernels_*.cpp), and MatmulKernels, the matmul
// part of each level's KernelTable (kernel_table.h) that the driver runs.
//
// Weights are cut into panels of kPanel = 16 outputs (two 8-float AVX vectors), zero-padded
// past N, each panel contiguous:
//   F32 / F16:  panel[k * 16 + j] = W[16 p + j][k]                     (K * 16 elements)
//   Q8_0:       K / 32 blocks of kQ8PanelBlockBytes bytes; block b holds
//                 float  scale[16]            scale[j] = d of W[16 p + j], block b
//                 int8   q[16 pairs][16 * 2]  q[t][16 g + 2 i + h] =
//                                                 q of W[16 p + 8 g + i][32 b + 2 t + h]
//               i.e. for each pair of k, two groups of 8 outputs x 2 consecutive k, which is
//               what vpmaddwd consumes once widened to int16 (see matmul_kernels_avx2.cpp).
//   The Q8_0 GEMM widens the K slice of a panel it is about to reuse into "wide" blocks of
//   kQ8WideBlockBytes: the same 16 float scales, then the same q values as int16.
//   Q8_0 packed for the avx512 level (q8_uses_quads) keeps the block size but stores quads:
//                 float  scale[16]            as above
//                 uint8  u[8 quads][16 * 4]   u[t][4 j + i] = 128 + q of W[16 p + j][32 b + 4 t + i]
//               i.e. one zmm per quad of k: what vpdpbusd multiplies (unsigned) against four
//               signed activations broadcast to every output; the +128 is taken back per
//               activation block (see the VNNI activation layout below).
//   Q8_0 packed for the i8mm level (q8_uses_mmla; the VNNI slots, SMMLA kernels) keeps the
//               block size but stores signed q in the "pair" order:
//                 float  scale[16]            as above
//                 int8   q[4 octs][8 pairs][2 * 8]  q[m][16 p + 8 h + i] =
//                                                 q of W[16 p' + 2 p + h][32 b + 8 m + i]
//               (p' the panel), i.e. for each 8 k two outputs' 8 bytes side by side: one vector
//               is the 8x2 operand of one SMMLA (2 rows x 8 k times 8 k x 2 outputs). Padding
//               rows are q = 0. The activations stay in the VNNI layout (corr unused).
//   Unsigned-form types (Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K): ggml's blocks as stored,
//               reordered but not re-encoded, so the resident size is the file's: panel p holds,
//               for each block column c < K / block values, the blocks of column c of its 16 rows
//               in row order (zero blocks, whose values are 0, for padding rows).
//   The GEMM decodes the K slice of a panel it is about to reuse into "units" of 32 k, of
//   kKqUnitBytes each (matmul_kquant.cpp), in the thread's buffer:
//                 float  s[2][16], o[2][16]   scale and offset of group h (16 k) of output j
//                 uint8  u[8 quads][16 * 4]   u[t][4 j + i] = u of W[16 p + j][32 b + 4 t + i]
//               with W = s * u - o in each group (quant::unsigned_unit), u < 64: the quad layout
//               that vpdpbusd (and vpmaddubsw) multiplies, unsigned, by signed activations.
//               Types whose groups are 32 k (all but Q6_K) have s[1] = s[0] and o[1] = o[0].
//               At the i8mm level the units' u are in the pair order of the i8mm Q8_0 layout
//               instead (u[m][16 p + 8 h + i] = u of W[16 p' + 2 p + h][32 b + 8 m + i]); its
//               decoder and tile agree on it, and the floats are as above.
//
// Activations are packed per call into row panels of MR rows, zero-padded past M, and cut
// along K into the slices the GEMM loops over (see matmul.cpp): slice s holds, for every row
// panel in turn, that panel's kc_s columns, so the tiles of a K slice read A as one stream.
// Within one row panel and slice (kc columns starting at k0):
//   F32 / F16 GEMM (MR = kRowsF32):  a[k * MR + r] = x[MR i + r][k0 + k]
//   Q8_0 (MR = kRowsQ8):  int16 q[2 ((16 b + t) MR + r) + h] =
//                           quantised x[MR i + r][k0 + 32 b + 2 t + h]
//     (pairs of consecutive k, one pair per row, so one 32-bit broadcast feeds vpmaddwd), and
//     float scale[b MR + r] = that row's scale for block b. Rows quantised for the
//     matrix-vector kernel use MR = 1 and one slice.
//   Q8_0 with VNNI (MR = kRowsQ8Vnni):  int8 q[32 (b MR + r) + i] = quantised x[..][k0 + 32 b + i]
//     (each row's block contiguous, so quad t is the 32-bit word at 4 t), float scale[b MR + r]
//     as above, and int32 corr[b MR + r] = -128 * (sum of that block's q), which cancels the
//     +128 of the quad weights exactly. Missing rows are zero. Matrix-vector rows: MR = 1.
//   Unsigned-form weights (MR = kRowsKq): int8 q and float scale as the VNNI layout, and float
//     corr[3 (b MR + r) + h] = scale * (sum of q over half h of the block) for h < 2, and
//     corr[3 (b MR + r) + 2] = scale * (sum over the whole block): the offsets' share.
//
// BF16 (opt-in, made at load from F32 or F16 weights; only where the CPU has AVX512_BF16):
//   weights:      K2 = ceil(K / 2) pairs of k; panel[32 t + 2 j + h] = bf16 of W[16 p + j][2 t + h]
//                 (zero past K and past N): one zmm per pair of k, what vdpbf16ps multiplies.
//   activations:  pairs too, one 32-bit word per row and pair of k (low half the even k):
//                 GEMM (MR = kRowsBf16), K slices counted in pairs as F32 counts floats:
//                   uint32 a[t MR + r] = (bf16 x[MR i + r][k0 + 2 t], bf16 x[..][k0 + 2 t + 1])
//                 matrix-vector rows: the K2 words of one row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/matmul.h"
#include "runtime/cpu_features.h"

namespace pk::kernels::matmul_detail {

constexpr int64_t kPanel = 16;
constexpr int64_t kRowsF32 = 6;
constexpr int64_t kRowsQ8 = 4;
constexpr int64_t kRowsQ8Vnni = 8;
constexpr int64_t kQ8Block = 32;
constexpr int64_t kQ8PairsPerBlock = kQ8Block / 2;
constexpr size_t kQ8PanelBlockBytes = kPanel * sizeof(float) + kPanel * kQ8Block;  // 576
constexpr size_t kQ8WideBlockBytes = kPanel * sizeof(float) + kPanel * kQ8Block * 2;  // 1088
constexpr int64_t kQ8QuadsPerBlock = kQ8Block / 4;
constexpr int32_t kQ8QuadBias = 128;
constexpr int64_t kRowsBf16 = 8;
constexpr int64_t kRowsKq = 4;      // portable and AVX2 tiles (AVX2 has 16 vector registers)
constexpr int64_t kRowsKqVnni = 8;  // AVX-512: each weight vector loaded once for 8 rows
constexpr size_t kKqUnitBytes = 4 * kPanel * sizeof(float) + kPanel * kQ8Block;  // 768
constexpr int64_t kKqCorrPerBlock = 3;
constexpr size_t kBf16PairBytes = kPanel * 2 * sizeof(uint16_t);  // 64: one pair of k, 16 outputs

// Whether Q8_0 products at `level` run the VNNI slots on the VNNI activation layout: the avx512
// level (vpdpbusd) and the dotprod level (SDOT) on quad-layout weights, the i8mm level (SMMLA)
// on pair-order weights (q8_uses_mmla).
static inline bool q8_uses_quads(IsaLevel level) {
    return isa_includes(level, IsaLevel::Avx512) || isa_includes(level, IsaLevel::Dotprod);
}

// Whether Q8_0 weights packed for `level` are in the pair order (SMMLA) rather than quads.
static inline bool q8_uses_mmla(IsaLevel level) { return isa_includes(level, IsaLevel::I8mm); }

// Q8_0 activation scale of a block whose largest |x| is amax: q = round-to-nearest-even(x * id),
// x ~ d * q. `static` on purpose: this header is also compiled into *_avx2.cpp files, and an
// inline function with external linkage could be emitted there with AVX2 instructions and
// then picked by the linker for the portable path.
struct Q8Scale {
    float d;
    float id;
};
static inline Q8Scale q8_scale(float amax) {
    return Q8Scale{amax / 127.0f, amax > 0.0f ? 127.0f / amax : 0.0f};
}

// MatmulKernels::quantize_q8_vnni around a level's quantiser of one block of 32,
// block(x, q, scale, corr): blocks [0, nblocks) of rows [0, rows) of x (row stride ldx) into a
// quad-layout activation panel of mr rows, the missing rows zero.
template <class Block>
static inline void quantize_quad_panel(const float* x, int64_t rows, int64_t ldx, int64_t nblocks, int64_t mr,
                                       int8_t* q, float* scale, int32_t* corr, Block block) {
    for (int64_t b = 0; b < nblocks; ++b) {
        for (int64_t r = 0; r < mr; ++r) {
            const int64_t o = b * mr + r;
            if (r < rows) {
                block(x + r * ldx + b * kQ8Block, q + o * kQ8Block, scale + o, corr + o);
            } else {
                for (int64_t i = 0; i < kQ8Block; ++i) q[o * kQ8Block + i] = 0;
                scale[o] = 0.0f;
                corr[o] = 0;
            }
        }
    }
}

// Calls tile(std::integral_constant<int, R>{}) with R = min(rows, MaxR) (at least 1): how a
// tile turns its runtime row count into the compile-time one its register arrays are sized by.
template <int MaxR, class Tile>
static inline void with_rows(int64_t rows, Tile&& tile) {
    if constexpr (MaxR > 1) {
        if (rows < MaxR) return with_rows<MaxR - 1>(rows, tile);
    }
    tile(std::integral_constant<int, MaxR>{});
}

// One micro-kernel call computes the first `rows` <= MR rows of a 16-wide tile over a slice of
// K (rows < MR only for the last, partial row panel):
//   acc = A_panel(slice) * B_panel(slice)
//   accumulate ? c += acc : c = acc + (bias ? bias[0..16) : 0)
// Every output element is one fixed sequence of operations over its K slice, whatever tile
// or thread it lands in; this is what makes results independent of the thread count.
struct MatmulKernels {
    // f32 tile: a = kc x kRowsF32 packed activations, b = kc x 16 weight panel rows.
    void (*tile_f32)(int64_t rows, int64_t kc, const float* a, const float* b, float* c,
                     int64_t ldc, const float* bias, bool accumulate);
    // Q8_0 tile over nblocks blocks of 32: a / a_scale as in the layout above (kRowsQ8 rows),
    // b = nblocks consecutive wide blocks.
    void (*tile_q8)(int64_t rows, int64_t nblocks, const int16_t* a, const float* a_scale,
                    const uint8_t* b, float* c, int64_t ldc, const float* bias, bool accumulate);
    // Widens nblocks consecutive panel blocks into wide blocks.
    void (*widen_q8)(const uint8_t* blocks, int64_t nblocks, uint8_t* wide);
    // Widens n halves to floats (F16 weights are converted a panel slice at a time).
    void (*f16_to_f32)(const uint16_t* src, int64_t n, float* dst);
    // Packs columns [0, kc) of rows [0, rows) of x (row stride ldx) into one f32 row panel
    // slice of kRowsF32 rows.
    void (*pack_rows_f32)(const float* x, int64_t rows, int64_t ldx, int64_t kc, float* a);
    // Quantises one row of K floats (K % 32 == 0) into q[K] and scale[K / 32] (the Q8_0
    // layout above with MR = 1). Must give the same bits on every path.
    void (*quantize_row_q8)(const float* x, int64_t K, int16_t* q, float* scale);
    // Quantises blocks [0, nblocks) of rows [0, rows) of x (row stride ldx) into one Q8_0 row
    // panel slice of kRowsQ8 rows.
    void (*quantize_panel_q8)(const float* x, int64_t rows, int64_t ldx, int64_t nblocks,
                              int16_t* q, float* scale);
    // Matrix-vector products for one panel: out[0..16) = sum_k x[k] * panel[k][0..16).
    void (*matvec_f32)(const float* x, int64_t K, const float* panel, float* out);
    void (*matvec_f16)(const float* x, int64_t K, const uint16_t* panel, float* out);
    // Same for Q8_0, with x quantised by quantize_row_q8 (stride 1).
    void (*matvec_q8)(const int16_t* xq, const float* x_scale, int64_t nblocks,
                      const uint8_t* panel, float* out);

    // Q8_0 with VNNI, on quad-layout weights; null in the tables below the avx512 level.
    // Each output gets the same float operations, in the same order, as through tile_q8 /
    // matvec_q8 (the integer block sums are exact either way), so the levels agree bitwise.
    // Tile of kRowsQ8Vnni rows: a / a_scale / a_corr as in the VNNI layout, b = nblocks
    // consecutive quad blocks of the packed panel.
    void (*tile_q8_vnni)(int64_t rows, int64_t nblocks, const int8_t* a, const float* a_scale,
                         const int32_t* a_corr, const uint8_t* b, float* c, int64_t ldc,
                         const float* bias, bool accumulate);
    // Same for two full panels at once (b, b1: their slices; c: the 32 outputs of the pair);
    // null where a level has no such tile (the driver then runs tile_q8_vnni per panel).
    void (*tile_q8_vnni_pair)(int64_t rows, int64_t nblocks, const int8_t* a, const float* a_scale,
                              const int32_t* a_corr, const uint8_t* b, const uint8_t* b1, float* c,
                              int64_t ldc, const float* bias, bool accumulate);
    // f32 tile over two full panels at once (b, b1: their kc x 16 slices; c: the pair's 32
    // outputs); null where a level has none (the driver then runs tile_f32 per panel).
    void (*tile_f32_pair)(int64_t rows, int64_t kc, const float* a, const float* b, const float* b1, float* c,
                          int64_t ldc, const float* bias, bool accumulate);
    // Quantises blocks [0, nblocks) of rows [0, rows) of x (row stride ldx) into a VNNI row
    // panel of mr >= rows rows (mr = kRowsQ8Vnni for the GEMM, 1 for matrix-vector rows).
    void (*quantize_q8_vnni)(const float* x, int64_t rows, int64_t ldx, int64_t nblocks,
                             int64_t mr, int8_t* q, float* scale, int32_t* corr);
    // out[0..16) for one quad-layout panel and one row quantised with mr = 1.
    void (*matvec_q8_vnni)(const int8_t* xq, const float* x_scale, const int32_t* x_corr,
                           int64_t nblocks, const uint8_t* panel, float* out);

    // BF16 weights with vdpbf16ps (opt-in); null in the tables below the avx512 level, and
    // reached only through BF16 weights, which are packed only where the CPU has AVX512_BF16.
    // Tile of kRowsBf16 rows over kc pairs of k: a = one slice of a row panel, b = the panel's
    // kc pairs.
    void (*tile_bf16)(int64_t rows, int64_t kc, const uint32_t* a, const uint16_t* b, float* c,
                      int64_t ldc, const float* bias, bool accumulate);
    // Packs columns [0, k_valid) of rows [0, rows) of x (row stride ldx) into one row panel
    // slice of kc >= k_valid / 2 pairs (kRowsBf16 rows; columns past k_valid and missing rows
    // are zero).
    void (*pack_rows_bf16)(const float* x, int64_t rows, int64_t ldx, int64_t kc, int64_t k_valid,
                           uint32_t* a);
    // One row of K floats as ceil(K / 2) pairs; out[0..16) = that row times one BF16 panel.
    void (*row_to_bf16)(const float* x, int64_t K, uint32_t* pairs);
    void (*matvec_bf16)(const uint32_t* x_pairs, int64_t k_pairs, const uint16_t* panel, float* out);

    // Unsigned-form weights (layouts above). Decodes units [u0, u0 + n) of one panel of `type`
    // into n consecutive units (u in quads; in pairs at the i8mm level, as its tile reads them).
    void (*decode_kq_units)(WeightType type, const uint8_t* panel, int64_t u0, int64_t n, uint8_t* units);
    // Quantises blocks [0, nblocks) of rows [0, rows) of x (row stride ldx) into an activation
    // panel of mr >= rows rows (mr = kq_rows), missing rows zero. The same bits at every level.
    void (*quantize_kq)(const float* x, int64_t rows, int64_t ldx, int64_t nblocks, int64_t mr,
                        int8_t* q, float* scale, float* corr);
    // Rows of the activation panels tile_kq reads (kRowsKq, or kRowsKqVnni at the avx512 level).
    int64_t kq_rows;
    // Tile of rows <= kq_rows rows over nunits units; halves: the weights' groups are 16 k (Q6_K), else
    // 32. Per output, unit and group: isum = exact integer sum of u * q, then
    //   acc = fma(s * float(isum), scale, acc);  acc = fma(-o, corr, acc)
    // in that order (so every level gives the same bits).
    void (*tile_kq)(int64_t rows, int64_t nunits, bool halves, const int8_t* a, const float* a_scale,
                    const float* a_corr, const uint8_t* units, float* c, int64_t ldc, const float* bias,
                    bool accumulate);
};

// The portable decoder into quad-order units (matmul_kquant.cpp; the scalar level's
// decode_kq_units), which the i8mm level's decoder runs before reordering each unit.
void decode_kq_units_quads(WeightType type, const uint8_t* panel, int64_t u0, int64_t n, uint8_t* units);

}  // namespace pk::kernels::matmul_detail
