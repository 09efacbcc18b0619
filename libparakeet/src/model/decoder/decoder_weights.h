// Loading helpers for the decoder's weights, which are not all `<prefix>.weight` Linear layers
// (the LSTM's weight_ih_l0 / weight_hh_l0, the embedding table).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "model/tensor_loader.h"

namespace pk {

// The [n, k] matrix `name` (F32, F16 or any quantised type), repacked for kernels::matmul at t.level().
std::shared_ptr<const kernels::PackedWeights> load_packed_weights(const TensorLoader& t, const std::string& name,
                                                                  int64_t n, int64_t k);

// The [rows, cols] tensor `name` as floats, whatever its stored type.
std::vector<float> load_f32_copy(const TensorLoader& t, const std::string& name, int64_t rows, int64_t cols);

}  // namespace pk
