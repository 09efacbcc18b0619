// Quantising a quantised model's remaining F32 matrices to Q8_0 at load.
//
// Quantised GGUF files (q8_0, the K-quants, q4_0/q5_0, ...) keep some large matmul weights in
// F32: the conv module's pointwise convolutions in ours and in parakeet.cpp's, the subsampling
// output projection too in parakeet.cpp's. Since the int8 GEMM runs ~3x faster than the f32
// one (AVX-512 VNNI), those F32 products would be ~30 % of a q8_0 request's GEMM time, and
// more of a K-quant one's. A model whose encoder is stored quantised therefore quantises them
// to Q8_0 at load (bit-identical to what our converter would have stored for a q8_0 file),
// unless LoadOptions::q8_all is off (PARAKEET_Q8_ALL=0). That also makes the resident size
// smaller, never larger. Measured cost and gain: docs/performance.md, "q8_0: quantising the
// remaining F32 matrices at load".
//
// This file is the one place that decides which tensors; Linear::load applies it.
#pragma once

#include <string>

#include "gguf/gguf_reader.h"
#include "kernels/matmul.h"

namespace pk {

// A "quantised model": some tensor of the first encoder layer (whose weights are the bulk of
// every file) is stored in a quantised ggml type. Not only the first FFN weight: under the
// K-quants a row shorter than 256 keeps it F32 while the layer's other matrices are quantised.
bool is_quantised_model(const GgufReader& gguf);

// Whether the weight tensor `name` is one of those quantised at load (when F32, in a q8_0
// model, with the switch on): the conv module's pointwise convolutions and the subsampling
// output projection, the encoder's remaining GEMMs; with `subsampling` (LoadOptions::q8_subsampling,
// opt-in: ~4 % off a q8_0 request, but about 2x the encoder's drift from f32 on the NeMo
// fixtures, docs/performance.md) also the subsampling's pointwise convolutions (conv.3, conv.6). The CTC head stays F32: its logits feed
// the token argmax directly and quantising it cost CTC token agreement on the fixtures
// (0.983 -> 0.919) to save < 1 ms per 10 s of audio (66 M MACs at 110M size). So do the LSTM,
// the embeddings and the joint's output layer (step-wise decoder work, same argmax concern).
bool quantised_at_load(const std::string& name, bool subsampling);

// An F32 matrix [rows, cols] (cols a whole number of Q8_0 blocks) quantised to Q8_0, as our
// converter would have stored it, and packed for `level`.
kernels::PackedWeights q8_0_at_load(const float* w, int64_t rows, int64_t cols, IsaLevel level);

}  // namespace pk
