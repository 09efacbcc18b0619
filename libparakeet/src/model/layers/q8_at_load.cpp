#include "model/layers/q8_at_load.h"

#include <regex>
#include <vector>

#include "kernels/quantize_q8_0.h"
#include "model/gguf_schema.h"

namespace pk {

bool is_quantised_model(const GgufReader& gguf) {
    const std::string layer0 = schema::layer_module(0, "");
    for (const GgufTensor& t : gguf.tensors()) {
        if (t.name.compare(0, layer0.size(), layer0) == 0 && ggml_type_is_quantised(t.type)) return true;
    }
    return false;
}

kernels::PackedWeights q8_0_at_load(const float* w, int64_t rows, int64_t cols, IsaLevel level) {
    std::vector<uint8_t> q(kernels::weight_row_bytes(kernels::WeightType::Q8_0, cols) * static_cast<size_t>(rows));
    kernels::quantize_q8_0(w, rows * cols, q.data());
    return kernels::PackedWeights(kernels::WeightType::Q8_0, q.data(), rows, cols, level);
}

bool quantised_at_load(const std::string& name, bool subsampling) {
    static const std::regex kNames(schema::kQuantisedAtLoad);
    static const std::regex kSubsamplingNames(schema::kQuantisedAtLoadSubsampling);
    return std::regex_match(name, kNames) ||
           (subsampling && std::regex_match(name, kSubsamplingNames));
}

}  // namespace pk
