// F32 -> GGUF Q8_0 weight encoding, for matrices a model quantises at load (see
// model/layers/q8_at_load.h) rather than reading them quantised from the file.
//
// It is bit-identical to ggml's quantize_row_q8_0_ref and to our converter
// (parakeet_py/convert/quantize.py), so a matrix quantised here holds exactly the bytes a
// fully-quantised file would: per block of 32 values d = max|x| / 127 (float), id = 1/d (0
// when d is 0), q = roundf(x * id) (half away from zero), then d stored as an IEEE half
// (nearest even). Note q uses the float d, not the rounded half. Not the activation rule
// of matmul() (which rounds half to even and keeps a float scale).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pk::kernels {

// Values per Q8_0 block (GGUF's QK8_0).
constexpr int64_t kQ8_0BlockValues = 32;

// Encodes x[0 .. n) (n a multiple of 32) as n / 32 blocks of 34 bytes (half d, 32 int8 q)
// into out. Throws std::invalid_argument when n % 32 != 0.
void quantize_q8_0(const float* x, int64_t n, uint8_t* out);

}  // namespace pk::kernels
