// Linear: a weight matrix repacked once at load plus an optional bias — the building block of
// every projection in the encoder and decoders (PyTorch nn.Linear, and 1x1 Conv1d, which is
// the same product).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/matmul.h"
#include "model/tensor_loader.h"

namespace pk {

// Which kernels the products of a stage run on its rows (kernels::MatmulPath). By default Auto,
// for a request alone. A batched streaming step stacks the rows of many streams and gives each
// stream's rows the kernels its step gets alone (auto_path of its row count), so that they
// keep their bits: the streams with few rows come first, rows [0, matvec_rows) run by the
// matrix-vector kernel, the rest by the GEMM tiles. Weights for which every path gives the
// same bits (kernels::path_invariant: Q8_0, the K-quants) run all the rows by Auto.
struct RowPaths {
    bool batched = false;
    int64_t matvec_rows = 0;
    // The same for the rows from row r0 on (a chunk of the stage's rows).
    RowPaths from(int64_t r0) const { return {batched, matvec_rows - r0}; }
};

class Linear {
public:
    Linear() = default;

    // Loads `<prefix>.weight` (PyTorch shape [out, in] or [out, in, 1]; F32, F16 or any quantised type) and
    // `<prefix>.bias` ([out], F32) — the bias may be absent unless `bias_required`.
    static Linear load(const TensorLoader& t, const std::string& prefix, int64_t out, int64_t in,
                       bool bias_required);

    // Rows [row0, row0 + out) of `<prefix>.weight` ([rows, in], any type: a quantised row is
    // whole blocks) and of its bias ([rows], F32, required): one part of a fused projection
    // such as parakeet.cpp's attn.w_qkv (q, k and v stacked).
    static Linear load_rows(const TensorLoader& t, const std::string& prefix, int64_t row0, int64_t out,
                            int64_t rows, int64_t in);

    // y[M, out] = x[M, in] · Wᵀ + b; ldy is y's row stride (-1: out). `path`: which kernels
    // (kernels::MatmulPath; Gemm or Matvec where a row's bits must not depend on M).
    void forward(ThreadTeam& team, Arena& arena, const float* x, int64_t M, float* y, int64_t ldy = -1,
                 kernels::MatmulPath path = kernels::MatmulPath::Auto) const {
        kernels::matmul(team, arena, x, M, in_, *weights_, bias_, y, ldy, path);
    }
    // forward() on rows whose kernels `paths` gives (y's row stride: out).
    void forward(ThreadTeam& team, Arena& arena, const float* x, int64_t M, float* y, const RowPaths& paths) const;

    int64_t in() const { return in_; }
    int64_t out() const { return out_; }
    const float* bias() const { return bias_; }
    const kernels::PackedWeights& weights() const { return *weights_; }
    size_t packed_bytes() const { return weights_ ? weights_->packed_bytes() : 0; }

private:
    std::shared_ptr<const kernels::PackedWeights> weights_;
    const float* bias_ = nullptr;
    int64_t in_ = 0;
    int64_t out_ = 0;
};

}  // namespace pk
