// Decoding a request that carries hotwords (RequestOptions::hotwords): which head, and the
// biased greedy search (context_bias.h) on it.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"

namespace pk {

// Whether a request with hotwords decodes with the CTC head. Default picks as parakeet.cpp's
// contextual calls do: the TDT head when the model has one (hybrids too), else the CTC head.
// Throws InvalidArgument for beam search (hotwords are greedy only), for an RNN-T head chosen or
// left as the only one, and for a head the model lacks.
bool hotwords_use_ctc(const Model& model, const RequestOptions& options);

// The biased greedy tokens of the encoder output enc [frames, d_model] on `b` (locked).
std::vector<TranscriptToken> hotword_tokens(const Model& model, Backend& b, const float* enc, int64_t frames,
                                            bool use_ctc, const RequestOptions& options, ContextStats* stats);

}  // namespace pk
