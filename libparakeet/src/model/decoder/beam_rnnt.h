// RNN-T beam search, step for step what NeMo 3.0.0's BeamRNNTInfer does
// (nemo/collections/asr/parts/submodules/rnnt_beam_decoding.py):
//   - beam_size 1: its greedy_search, NOT GreedyRNNTInfer: at most 5 symbols per frame
//     (hard-coded there), the score sums the emitted tokens' log-probabilities only;
//   - otherwise default_beam_search, with B = min(beam, V): at frame t the hypotheses are
//     expanded best first; an expansion takes log_softmax over the V+1 logits and makes a
//     hypothesis of each of the top min(B, V-1) tokens (expanded again at t) and one of the
//     blank (kept for t + 1); frame t ends as soon as at least B kept hypotheses beat every one
//     still to expand, and all of those go on (there may be more than B). No merging.
// Scores are double sums of float32 log-probabilities (NeMo's Python floats).
#pragma once

#include <vector>

#include "model/decoder/beam_search.h"
#include "model/decoder/prediction_cache.h"

namespace pk {

// Hypotheses over frames [0, n_frames), sorted best first (see beam_search.h).
std::vector<BeamHypothesis> beam_rnnt(PredictionCache& net, int n_frames, const BeamSearchOptions& options);

}  // namespace pk
