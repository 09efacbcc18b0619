// Matrix products with a weight matrix: y[M, N] = x[M, K] * W^T (+ bias[N]).
//
// W is a PyTorch Linear weight, row-major [N outputs, K inputs] (GGUF: ne0 = K). It is
// repacked ONCE at model load into a PackedWeights, which the kernels then share read-only
// across threads and backends. x and y are f32, row-major; x is contiguous.
//
// matmul() picks a register-blocked GEMM for M > 1 (encoder) and a streaming matrix-vector
// product for M == 1 (decoder steps, memory bound), and splits the work over the team by
// output tiles only, so results are bitwise identical for any team size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/arena.h"
#include "runtime/cpu_features.h"
#include "runtime/thread_team.h"

namespace pk::kernels {

namespace matmul_detail {
struct MatmulKernels;
}

// The values of the stored types are ggml's type ids.
enum class WeightType : uint8_t {
    F32 = 0,   // float
    F16 = 1,   // IEEE half
    Q4_0 = 2,  // ggml's 4- to 6-bit blocks (quant/ggml_blocks.h), kept in their stored bytes:
    Q4_1 = 3,  //   the "unsigned-form" types of matmul_layout.h, which the kernels decode
    Q5_0 = 6,  //   into unsigned integers with a scale and an offset per 16 or 32 k
    Q5_1 = 7,
    Q8_0 = 8,  // GGUF Q8_0: blocks of 32 weights along K, each a half scale d and 32 int8 q, w = d*q
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    BF16 = 30, // bfloat16 (opt-in, made at load from F32 / F16: PackedWeights::to_bf16); needs a
               // CPU with AVX512_BF16 at the avx512 level, and the activations are rounded to
               // bfloat16 too (products accumulate in f32)
};

// Whether `type` is one of the unsigned-form block types (Q4_0 ... Q6_K, Q8_0 excepted).
bool is_unsigned_form(WeightType type);
// Weights per block of a stored type (1 for F32 / F16 / BF16, 32, or 256 for the K-quants).
int64_t weight_block_values(WeightType type);

// Bytes of one row of K raw weights of this type (Q8_0: K / 32 blocks of 34 bytes; the block
// types: K / block values blocks of ggml's size).
size_t weight_row_bytes(WeightType type, int64_t k);

class PackedWeights {
public:
    // Repacks `data`: N rows of weight_row_bytes(type, K) bytes each (e.g. mmap'd GGUF memory,
    // which is not kept). Throws std::invalid_argument for N or K < 1, or K not a multiple of the
    // type's block (weight_block_values).
    // The layout is the one the kernels of `level` read, and matmul() runs those kernels on
    // it (kernel_table(level)): a model packs for the level it was loaded at; tests pack for
    // each level to compare them in one process. A level above the CPU's throws.
    PackedWeights(WeightType type, const void* data, int64_t n, int64_t k, IsaLevel level);

    // F32 or F16 weights (`source`, raw rows as above) rounded to bfloat16 (nearest even) and
    // packed as BF16 for `level`. Throws std::invalid_argument for other sources, or where
    // BF16 weights cannot run (bf16_available(level) is false).
    static PackedWeights to_bf16(WeightType source, const void* data, int64_t n, int64_t k,
                                 IsaLevel level);
    // Whether BF16 weights can be packed and run at `level`: it is avx512 and the CPU has
    // AVX512_BF16.
    static bool bf16_available(IsaLevel level);

    PackedWeights(const PackedWeights&) = delete;
    PackedWeights& operator=(const PackedWeights&) = delete;
    PackedWeights(PackedWeights&&) noexcept = default;
    PackedWeights& operator=(PackedWeights&&) noexcept = default;

    WeightType type() const { return type_; }
    int64_t n() const { return n_; }
    int64_t k() const { return k_; }
    IsaLevel level() const { return level_; }
    // The micro-kernels of level(), looked up (and the level checked) once, at packing, so
    // that matmul() does no table lookup per call: decode steps make many small calls.
    const matmul_detail::MatmulKernels& kernels() const { return *kernels_; }
    // Bytes owned by this object (the packed copy).
    size_t packed_bytes() const { return bytes_; }

    // Number of 16-output panels, and the start of panel p (layout: see matmul_layout.h).
    int64_t n_panels() const;
    const uint8_t* panel(int64_t p) const;

private:
    WeightType type_;
    int64_t n_;
    int64_t k_;
    IsaLevel level_;
    const matmul_detail::MatmulKernels* kernels_;
    size_t bytes_;
    std::unique_ptr<uint8_t[], void (*)(void*)> data_;
};

// Which kernels run a product. A kernel computes each row on its own, but the two kinds sum in
// different orders, so a row's bits depend on which one ran it:
//   Auto    the fastest for M: the matrix-vector kernel row by row for M <= 4 (few rows, one
//           stream over the weights), the GEMM tiles above;
//   Gemm    the GEMM tiles for every M: the rows of products whose M depends on how many
//           requests are batched together (the streaming encoder step) keep their bits;
//   Matvec  the matrix-vector kernel row by row for every M (the weights still read once for
//           all rows): the same for batched decoder steps, which run M = 1 alone.
// Unsigned-form weights (Q4_0 ... Q6_K) run one kernel for every M, whatever the path, and
// Q8_0's two kernels sum a row in one order: for these (path_invariant) every path gives a row
// the same bits.
enum class MatmulPath : uint8_t { Auto, Gemm, Matvec };
// The most rows Auto runs by the matrix-vector kernel: a GEMM tile would compute (and a weight
// slice be copied for) 4-8 rows to use 1-4.
constexpr int64_t kMatvecMaxRows = 4;
// Whether every MatmulPath gives a row of `type` the same bits (Q8_0 and the unsigned-form types).
bool path_invariant(WeightType type);
// The fixed path Auto takes for M rows.
inline MatmulPath auto_path(int64_t M) { return M <= kMatvecMaxRows ? MatmulPath::Matvec : MatmulPath::Gemm; }
// The path for rows stacked from products that each run one row alone (the batched decoder
// steps): Auto, the fastest for the stack, where no path changes a row's bits; else Matvec,
// the kernel a lone row gets.
inline MatmulPath single_row_path(WeightType type) {
    return path_invariant(type) ? MatmulPath::Auto : MatmulPath::Matvec;
}

// y[m * ldy + j] = sum_k x[m * K + k] * W[j][k] (+ bias[j]) for m < M, j < N = w.n().
// K must equal w.k(); ldy >= N (ldy < 0 means N). bias may be null. y must not overlap x.
// Q8_0 weights: each row of x is quantised per block of 32 to int8 (scale max|x| / 127,
// round to nearest even) and the products are exact integer sums scaled per block.
// Unsigned-form weights (Q4_0 ... Q6_K): x is quantised per block of 32 as for Q8_0; each group
// of 16 or 32 k adds scale_x * (s * (integer sum of u * q_x)) - o * scale_x * (sum of q_x).
// BF16 weights: each row of x is rounded to bfloat16 (nearest even) and the products of
// pairs are accumulated in f32.
// The kernels are those of w.level(); levels give bitwise identical Q8_0 results. `path` picks
// them by M (above); with Gemm or Matvec row m's bits depend only on row m of x, whatever M.
// Scratch space comes from `scratch` and is given back before returning. The caller owns the
// team (one job at a time). Throws std::invalid_argument on mismatched sizes.
void matmul(ThreadTeam& team, Arena& scratch, const float* x, int64_t M, int64_t K,
            const PackedWeights& w, const float* bias, float* y, int64_t ldy = -1,
            MatmulPath path = MatmulPath::Auto);

// Bytes of the scratch matmul_q8_solo takes for M rows of Q8_0 weights w.
size_t matmul_q8_solo_scratch_bytes(int64_t M, const PackedWeights& w);
// matmul() of Q8_0 weights on the Gemm path, run by the calling thread alone in the caller's
// scratch (matmul_q8_solo_scratch_bytes(M, w) bytes, 64-byte aligned), on rows of x ldx >= K
// floats apart: for the threads of a team that each run products of their own (a Winograd
// convolution's, per band of tiles: model/speaker/winograd_conv3x3.h). The bits matmul() gives
// on the same rows. Throws std::invalid_argument as matmul() does, for ldx < K and for weights
// of another type.
void matmul_q8_solo(void* scratch, const float* x, int64_t ldx, int64_t M, int64_t K, const PackedWeights& w,
                    const float* bias, float* y, int64_t ldy = -1);

// matmul on the Matvec path with a bias row per row of x: y[m] = x[m] · Wᵀ + row_bias[m * N, +N)
// (a batched prediction-net step: each stream's first LSTM layer adds its own token's input
// row). Row m gets the bits matmul gives it alone with row_bias + m * N as the bias.
void matvec_row_bias(ThreadTeam& team, Arena& scratch, const float* x, int64_t M, int64_t K,
                     const PackedWeights& w, const float* row_bias, float* y);

}  // namespace pk::kernels
