// The opt-in bfloat16 encoder: LoadOptions::bf16 (PARAKEET_BF16=1) rounds an f32 or f16 model's encoder matrices
// to bfloat16 at load, and their products then run on vdpbf16ps (kernels/matmul.h, BF16),
// twice the f32 FMA rate on AVX-512 BF16 CPUs. Activations are rounded to bfloat16 too, so
// the numbers change (8 mantissa bits instead of 24); docs/performance.md measures the speed
// and the token agreement with f32. Off by default.
//
// Only the encoder's Linear weights: the decoders' matrices (prediction net, joint, CTC head)
// feed the token argmax step by step and stay as stored, as do the subsampling's convolutions.
// A q8_0 model's Q8_0 matrices are not touched; its F32 ones that q8_at_load.h quantises are
// quantised, the others (q8_all off) become bfloat16.
//
// This file is the one place that decides which tensors; Linear::load applies it.
#pragma once

#include <string>

#include "runtime/cpu_features.h"

namespace pk {

// Throws Unsupported unless BF16 products can run at `level` on this CPU: AVX512_BF16 at the
// avx512 level (LoadOptions::bf16 asks for them).
void check_bf16_available(IsaLevel level);

// Whether the F32/F16 weight tensor `name` becomes bfloat16 when the switch is on.
bool bf16_at_load(const std::string& name);

}  // namespace pk
