// Greedy RNN-T search as NeMo 3.0.0's GreedyRNNTInfer._greedy_decode does it
// (nemo/collections/asr/parts/submodules/rnnt_greedy_decoding.py): for each frame t in
// [0, n_frames), take steps until the argmax of the V+1 logits is the blank or max_symbols
// tokens were emitted at t; a non-blank token is emitted at frame t (duration 1) and the
// prediction net advances on it; then go to frame t + 1. There is no extra advance at the cap.
#pragma once

#include <vector>

#include "model/decoder/transducer_steps.h"
#include "model/transcript/transcript.h"

namespace pk {

// Tokens of frames [0, n_frames); options.durations is ignored.
std::vector<TranscriptToken> greedy_rnnt(TransducerSteps& net, int n_frames, const GreedyOptions& options);

}  // namespace pk
