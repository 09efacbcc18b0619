// Internal to the matmul kernels: the packed layouts shared by the weight packer, the driver
// (matmul.cpp) and the micro-kernels (matmul_kernels_*.cpp), and the table of micro-kernels
// the driver picks from at run time.
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
#pragma once

#include <cstddef>
#include <cstdint>

namespace pk::kernels::matmul_detail {

constexpr int64_t kPanel = 16;
constexpr int64_t kRowsF32 = 6;
constexpr int64_t kRowsQ8 = 4;
constexpr int64_t kQ8Block = 32;
constexpr int64_t kQ8PairsPerBlock = kQ8Block / 2;
constexpr size_t kQ8PanelBlockBytes = kPanel * sizeof(float) + kPanel * kQ8Block;  // 576
constexpr size_t kQ8WideBlockBytes = kPanel * sizeof(float) + kPanel * kQ8Block * 2;  // 1088

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
};

const MatmulKernels& scalar_matmul_kernels();
#if defined(PARAKEET_HAVE_X86)
const MatmulKernels& avx2_matmul_kernels();
#endif
// The table for this CPU (AVX2 when cpu_features() has it, else the portable one).
const MatmulKernels& active_matmul_kernels();

}  // namespace pk::kernels::matmul_detail
