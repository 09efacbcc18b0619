// Comparing a stored tensor's shape with the PyTorch shape a schema expects.
//
// Size-1 dimensions are ignored on both sides: they change no byte of a contiguous tensor, and
// files differ in keeping them. ggml's GGUF writer (parakeet.cpp's `quantize`) drops trailing
// size-1 ne dimensions, so the filterbank [1, 80, 257] comes back as [80, 257]; our converter
// stores a 1x1 conv weight [out, in, 1] where a Linear [out, in] is read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"

namespace pk {

// Whether tensor `t` holds the PyTorch shape `torch_shape` (outermost first; the file stores
// ne reversed) once every size-1 dimension is left out of both.
bool same_shape_ignoring_ones(const GgufTensor& t, const std::vector<int64_t>& torch_shape);

// "[80, 257]": a PyTorch shape, and a stored tensor's shape in PyTorch order, for messages.
std::string torch_shape_string(const std::vector<int64_t>& torch_shape);
std::string torch_shape_string(const GgufTensor& t);

}  // namespace pk
