#include "model/decoder/decoder_weights.h"

#include "quant/ggml_blocks.h"

namespace pk {

std::shared_ptr<const kernels::PackedWeights> load_packed_weights(const TensorLoader& t, const std::string& name,
                                                                  int64_t n, int64_t k) {
    const GgufTensor& w = t.get(name, {n, k});
    auto packed = std::make_shared<const kernels::PackedWeights>(t.weight_type(w), w.data, n, k, t.level());
    t.release(w);
    return packed;
}

std::vector<float> load_f32_copy(const TensorLoader& t, const std::string& name, int64_t rows, int64_t cols) {
    const GgufTensor& w = t.get(name, {rows, cols});
    const size_t n = static_cast<size_t>(rows * cols);
    std::vector<float> out(n);
    quant::dequantize_row(w.type, w.data, static_cast<int64_t>(n), out.data());
    return out;
}

}  // namespace pk
