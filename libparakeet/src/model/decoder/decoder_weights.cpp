#include "model/decoder/decoder_weights.h"

#include <cstring>

#include "kernels/f16.h"

namespace pk {

std::shared_ptr<const kernels::PackedWeights> load_packed_weights(const TensorLoader& t, const std::string& name,
                                                                  int64_t n, int64_t k) {
    const GgufTensor& w = t.get(name, {n, k});
    kernels::WeightType type = kernels::WeightType::F32;
    switch (w.type) {
        case GgmlType::F32: type = kernels::WeightType::F32; break;
        case GgmlType::F16: type = kernels::WeightType::F16; break;
        case GgmlType::Q8_0: type = kernels::WeightType::Q8_0; break;
    }
    return std::make_shared<const kernels::PackedWeights>(type, w.data, n, k, t.level());
}

std::vector<float> load_f32_copy(const TensorLoader& t, const std::string& name, int64_t rows, int64_t cols) {
    const GgufTensor& w = t.get(name, {rows, cols});
    const size_t n = static_cast<size_t>(rows * cols);
    std::vector<float> out(n);
    switch (w.type) {
        case GgmlType::F32:
            std::memcpy(out.data(), w.data, n * sizeof(float));
            break;
        case GgmlType::F16:
            for (size_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, w.data + 2 * i, sizeof h);
                out[i] = kernels::f16_to_f32(h);
            }
            break;
        case GgmlType::Q8_0: {
            // Blocks of 34 bytes: a half scale d, then 32 int8 q; value = d * q.
            for (size_t b = 0; b < n / 32; ++b) {
                const uint8_t* block = w.data + 34 * b;
                uint16_t h;
                std::memcpy(&h, block, sizeof h);
                const float d = kernels::f16_to_f32(h);
                for (size_t j = 0; j < 32; ++j) out[32 * b + j] = d * static_cast<int8_t>(block[2 + j]);
            }
            break;
        }
    }
    return out;
}

}  // namespace pk
