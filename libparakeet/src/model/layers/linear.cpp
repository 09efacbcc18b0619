#include "model/layers/linear.h"

#include <algorithm>
#include <vector>

#include "kernels/quantize_q8_0.h"
#include "model/gguf_schema.h"
#include "model/layers/bf16_at_load.h"
#include "model/layers/q8_at_load.h"

namespace pk {

Linear Linear::load(const TensorLoader& t, const std::string& prefix, int64_t out, int64_t in,
                    bool bias_required) {
    Linear l;
    const GgufTensor& w = t.get(schema::weight(prefix), {out, in});
    // A quantised model quantises its remaining F32 matmul weights to Q8_0 here (q8_at_load.h); a row
    // length that is no whole number of Q8_0 blocks keeps F32. With LoadOptions::bf16 the
    // encoder's other F32/F16 weights become bfloat16 (bf16_at_load.h).
    if (w.type == GgmlType::F32 && t.q8_at_load() && quantised_at_load(w.name, t.q8_subsampling()) &&
        in % kernels::kQ8_0BlockValues == 0) {
        l.weights_ = std::make_shared<const kernels::PackedWeights>(
            q8_0_at_load(reinterpret_cast<const float*>(w.data), out, in, t.level()));
    } else if (t.bf16() && !ggml_type_is_quantised(w.type) && bf16_at_load(w.name)) {
        l.weights_ = std::make_shared<const kernels::PackedWeights>(
            kernels::PackedWeights::to_bf16(t.weight_type(w), w.data, out, in, t.level()));
    } else {
        l.weights_ = std::make_shared<const kernels::PackedWeights>(t.weight_type(w), w.data, out, in, t.level());
    }
    t.release(w);
    const std::string bias = schema::bias(prefix);
    l.bias_ = bias_required ? t.f32(bias, {out}) : t.optional_f32(bias, {out});
    l.in_ = in;
    l.out_ = out;
    return l;
}

void Linear::forward(ThreadTeam& team, Arena& arena, const float* x, int64_t M, float* y,
                     const RowPaths& paths) const {
    // Weights whose kernels give a row the same bits on every path run the fastest for M.
    if (!paths.batched || kernels::path_invariant(weights_->type())) return forward(team, arena, x, M, y);
    const int64_t v = std::clamp<int64_t>(paths.matvec_rows, 0, M);
    if (v > 0) forward(team, arena, x, v, y, -1, kernels::MatmulPath::Matvec);
    if (M > v) forward(team, arena, x + v * in_, M - v, y + v * out_, -1, kernels::MatmulPath::Gemm);
}

Linear Linear::load_rows(const TensorLoader& t, const std::string& prefix, int64_t row0, int64_t out,
                         int64_t rows, int64_t in) {
    if (row0 < 0 || out < 1 || row0 + out > rows) t.fail(prefix + ": rows out of range");
    Linear l;
    const GgufTensor& w = t.get(schema::weight(prefix), {rows, in});
    const uint8_t* first = w.data + static_cast<size_t>(row0) * w.row_bytes();
    l.weights_ = std::make_shared<const kernels::PackedWeights>(t.weight_type(w), first, out, in, t.level());
    l.bias_ = t.f32(schema::bias(prefix), {rows}) + row0;
    l.in_ = in;
    l.out_ = out;
    return l;
}

}  // namespace pk
