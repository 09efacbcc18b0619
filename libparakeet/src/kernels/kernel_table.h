// The one way per-ISA code is chosen: a table of function pointers per IsaLevel. Each level's
// table starts as a copy of the level below and overrides the entries it has code for
// (scalar < avx2 < avx512 on x86-64, scalar < neon < dotprod < i8mm on AArch64), so every slot
// is always filled, and a level without its own version of a kernel runs the best one below it.
//
// The caller chooses the level once (a model, at load: it packs its weights for the level and
// keeps kernel_table(level)). The portable entry points (softmax(), layer_norm(),
// depthwise_conv1d(), rel_pos_attention(), RealFft::forward, ...) take that table, split the
// work over the team and call its entries; matmul() runs the table of its weights' level
// (PackedWeights::level()). No kernel reads the level from cpu_features(); kernel_table()
// only checks that the CPU has the level asked for.
//
// Where a new kernel goes:
//   1. a slot in the family's struct below, or a new family struct in KernelTable (K-quant
//      tiles join MatmulKernels; an LSTM cell or an STFT would be new families), with its
//      contract: what one call computes, and what must not depend on the level or the split;
//   2. the portable version and the entry point in the family's .cpp (e.g. ops_softmax.cpp),
//      whose add_<file>_scalar(KernelTable&) fills the slot;
//   3. SIMD versions in <file>_<level>.cpp (avx2, avx512; neon, dotprod, i8mm), each with
//      internal linkage and one add_<file>_<level>(KernelTable&) that sets the slots it
//      overrides (declared at the end of this header, called from kernel_table.cpp);
//   4. a test (tests/cpp/test_kernel_*.cpp) parameterised over the levels (isa_levels.h).
// SIMD code lives only in those files (compiled with their level's flags; see
// libparakeet/CMakeLists.txt and tools/check_isa_isolation.sh): headers they include may hold
// only `static inline` code.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/attention_dot_product_int8_bf16.h"
#include "kernels/attention_local_rel_pos_block.h"
#include "kernels/conv_winograd_f4.h"
#include "kernels/matmul_layout.h"
#include "runtime/cpu_features.h"

namespace pk::kernels {

// rows x cols in, rows x cols out (y may be x): one row at a time, each row's result depending
// only on that row.
using RowsFn = void (*)(const float* x, int64_t rows, int64_t cols, float* y);

// The `hi` of OpsKernels::affine_clamp_rows and add_clamp that makes their clamp a ReLU.
inline constexpr float kReluCeiling = std::numeric_limits<float>::infinity();

// Row ops (ops_*.h give the maths). Each call handles a contiguous run of rows or elements, and
// an element's value never depends on where the run starts or ends (tails use the body's code).
struct OpsKernels {
    RowsFn softmax_rows;
    RowsFn log_softmax_rows;
    void (*layer_norm_rows)(const float* x, int64_t rows, int64_t cols, const float* weight,
                            const float* bias, float eps, float* y);
    void (*silu)(const float* x, int64_t n, float* y);
    void (*sigmoid)(const float* x, int64_t n, float* y);
    void (*gelu_erf)(const float* x, int64_t n, float* y);
    // x is [rows, 2 * channels], y is [rows, channels].
    void (*glu_rows)(const float* x, int64_t rows, int64_t channels, float* y);
    // y[r * ldy + c] = x[r * ldx + c] * scale[c] + shift[c] (scale and shift null: x), then
    // min(max(., 0), hi) when `clamp` (hi kReluCeiling: a ReLU), for r < rows, c < cols; y may be x.
    void (*affine_clamp_rows)(const float* x, int64_t ldx, int64_t rows, int64_t cols, const float* scale,
                              const float* shift, bool clamp, float hi, float* y, int64_t ldy);
    // y[i] = min(max(a[i] + b[i], 0), hi) for i < n (hi kReluCeiling: a ReLU); y may be a or b.
    void (*add_clamp)(const float* a, const float* b, int64_t n, float hi, float* y);
    // y[r * ldy + c] = clamp(a[r * lda + c]) + clamp(b[r * ldb + c]), clamp(v) = min(max(v, 0), hi),
    // for r < rows, c < cols: the sum of two Hardtanh'd maps (ERes2Net's next chunk input).
    void (*clamped_sum_rows)(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t rows, int64_t cols,
                             float hi, float* y, int64_t ldy);
};

// Convolutions (conv_*.h give the layouts). Each call computes the output rows
// [t_begin, t_end) (time rows, or pixel rows for the pointwise conv) of the whole output y.
struct ConvKernels {
    void (*depthwise_conv1d_rows)(const float* x, int64_t T, int64_t C, const float* packed_weight,
                                  int64_t kernel, const float* bias, int64_t t_begin, int64_t t_end,
                                  float* y);
    void (*conv2d_3x3_single_channel_rows)(const float* x, int64_t T, int64_t F, int stride,
                                           const float* packed_weight, const float* bias, int64_t C,
                                           bool relu, int64_t t_begin, int64_t t_end, float* y);
    void (*depthwise_conv2d_3x3_s2_rows)(const float* x, int64_t T, int64_t F, int64_t C,
                                         const float* packed_weight, const float* bias,
                                         int64_t t_begin, int64_t t_end, float* y);
    void (*pointwise_conv_rows)(const float* x, int64_t cin, const float* packed_weight,
                                int64_t cout, const float* bias, bool relu, int64_t row_begin,
                                int64_t row_end, float* y);
    // Winograd F(4x4, 3x3)'s transforms of a run of tiles (conv_winograd_f4.h).
    WinogradF4InputFn winograd_f4_input;
    WinogradF4OutputFn winograd_f4_output;
};

// The products of the relative-position attentions (attention_rel_pos.h,
// attention_local_rel_pos.h); the drivers prepare the operands and run the softmax between
// them with OpsKernels::softmax_rows.
// Query rows per call of AttentionKernels::rel_pos_scores: one zmm vector of them.
constexpr int64_t kRelPosRowBlock = 16;

struct AttentionKernels {
    // Full attention, one head, query rows [i0, i0 + nr), nr <= kRelPosRowBlock: kT [dk, T]
    // keys, pT [dk, 2T - 1] positions (row strides T and 2T - 1), qu / qv the queries plus
    // bias_u / bias_v, channel-major: qu[c * kRelPosRowBlock + r] (lanes r >= nr zero).
    // scores[r * T + j] = (qu_r · k_j + qv_r · p_{T-1-(i0+r)+j}) / sqrt(dk), each a chain of
    // multiply-adds over the channels in order.
    void (*rel_pos_scores)(const float* kT, const float* pT, int64_t T, int64_t dk, int64_t i0,
                           int64_t nr, const float* qu, const float* qv, float* scores);
    // out[r * ld + c] = sum over j < T, in order, of prob[r * T + j] * v[j * ld + c], for
    // r < nr and c < dk.
    void (*rel_pos_weighted_sums)(const float* prob, const float* v, int64_t ld, int64_t T,
                                  int64_t dk, int64_t nr, float* out);
    // One head's rows made columns (transpose.h): dst[c * ldd + t] = src[t * lds + c] for
    // t < n, c < cols, and columns [n, ldd) of each dst row zeroed.
    void (*transpose_padded)(const float* src, int64_t n, int64_t cols, int64_t lds, float* dst, int64_t ldd);
    // Local attention's block products (contracts in attention_local_rel_pos_block.h).
    local_attention::BlockProductsFn local_block_products;
    local_attention::BlockWeightedSumsFn local_block_weighted_sums;
    // The dot-product attention's int8 scores and bf16 weighted sums (attention_dot_product_int8_bf16.h):
    // null below the avx512 level, and run only where the CPU has AVX512_BF16 (dot_product_attention
    // checks).
    dot_product_int8_bf16::PackHeadFn int8_bf16_pack_head;
    dot_product_int8_bf16::AttendRowsFn int8_bf16_attend_rows;
};

// The tables a real FFT of n points runs on (fft.h: RealFft builds them once per length).
struct RealFftTables {
    int n;                    // real length, a power of two >= 2
    const uint32_t* bitrev;   // n/2 entries
    const float* stage_tw;    // per stage of half-size h: exp(-i*pi*j/h), j < h, at 2*(h-1)
    const float* split_tw;    // exp(-2*pi*i*k/n), k = 0..n/4, interleaved (re, im)
};

struct FftKernels {
    // out[2k], out[2k+1] = Re, Im of X[k] = sum_j in[j] exp(-2 pi i j k / n), k = 0..n/2.
    void (*real_forward)(const RealFftTables& t, const float* in, float* out);
};

// Dot products (ops_dot.h): a[0..n) · b[0..n) in the level's fixed order.
struct DotKernels {
    float (*dot)(const float* a, const float* b, int64_t n);
};

struct KernelTable {
    IsaLevel level;
    matmul_detail::MatmulKernels matmul;  // see matmul_layout.h
    OpsKernels ops;
    ConvKernels conv;
    AttentionKernels attention;
    FftKernels fft;
    DotKernels dot;
};

// The table of `level`, built once (thread-safe). Throws std::invalid_argument for a level
// above the CPU's (cpu_features().detected): its code would fault.
const KernelTable& kernel_table(IsaLevel level);

// ---- Internal: the fill functions kernel_table.cpp calls, add_<file>_<level> in <file>.cpp
// (scalar) or <file>_<level>.cpp. The scalar ones fill every slot of their family; the others
// override the slots they have code for.
void add_matmul_kernels_scalar(KernelTable& t);
void add_ops_softmax_scalar(KernelTable& t);
void add_ops_layer_norm_scalar(KernelTable& t);
void add_ops_activation_scalar(KernelTable& t);
void add_ops_rows_scalar(KernelTable& t);
void add_ops_dot_scalar(KernelTable& t);
void add_conv_depthwise1d_scalar(KernelTable& t);
void add_conv_pointwise_scalar(KernelTable& t);
void add_conv_winograd_f4_scalar(KernelTable& t);
void add_conv_subsampling_scalar(KernelTable& t);
void add_attention_rel_pos_scalar(KernelTable& t);
void add_transpose_scalar(KernelTable& t);
void add_attention_local_rel_pos_scalar(KernelTable& t);
void add_fft_scalar(KernelTable& t);
void add_matmul_kquant_scalar(KernelTable& t);  // Q4_0 ... Q6_K
#if defined(PARAKEET_HAVE_X86)
void add_matmul_kernels_avx2(KernelTable& t);
void add_ops_softmax_avx2(KernelTable& t);
void add_ops_layer_norm_avx2(KernelTable& t);
void add_ops_activation_avx2(KernelTable& t);
void add_ops_rows_avx2(KernelTable& t);
void add_ops_dot_avx2(KernelTable& t);
void add_conv_depthwise1d_avx2(KernelTable& t);
void add_conv_pointwise_avx2(KernelTable& t);
void add_conv_winograd_f4_avx2(KernelTable& t);
void add_conv_subsampling_avx2(KernelTable& t);
void add_attention_rel_pos_avx2(KernelTable& t);
void add_attention_local_rel_pos_avx2(KernelTable& t);
void add_matmul_kquant_avx2(KernelTable& t);

void add_matmul_kernels_avx512(KernelTable& t);       // Q8_0 with VNNI
void add_matmul_kernels_bf16_avx512(KernelTable& t);  // BF16 (reached only through BF16 weights)
void add_ops_softmax_avx512(KernelTable& t);
void add_ops_activation_avx512(KernelTable& t);
void add_ops_rows_avx512(KernelTable& t);
void add_attention_rel_pos_avx512(KernelTable& t);
void add_fft_avx512(KernelTable& t);
void add_transpose_avx512(KernelTable& t);
void add_attention_local_rel_pos_avx512(KernelTable& t);
void add_attention_dot_product_avx512(KernelTable& t);  // VNNI + BF16 (run only with AVX512_BF16)
void add_conv_pointwise_avx512(KernelTable& t);
void add_conv_winograd_f4_avx512(KernelTable& t);
void add_matmul_kquant_avx512(KernelTable& t);  // VNNI
#endif
#if defined(PARAKEET_HAVE_AARCH64)
void add_matmul_kernels_neon(KernelTable& t);
void add_ops_softmax_neon(KernelTable& t);
void add_ops_layer_norm_neon(KernelTable& t);
void add_ops_activation_neon(KernelTable& t);
void add_ops_dot_neon(KernelTable& t);

void add_matmul_kernels_dotprod(KernelTable& t);  // Q8_0 with SDOT
void add_matmul_kquant_dotprod(KernelTable& t);   // K-quant tiles with SDOT

void add_matmul_kernels_i8mm(KernelTable& t);  // Q8_0 with SMMLA
void add_matmul_kquant_i8mm(KernelTable& t);   // K-quant decoder and tile with SMMLA
#endif

}  // namespace pk::kernels
