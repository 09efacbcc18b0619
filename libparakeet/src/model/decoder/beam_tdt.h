// TDT beam search, step for step what NeMo 3.0.0's BeamTDTInfer.default_beam_search does
// (nemo/collections/asr/parts/submodules/tdt_beam_decoding.py), with B = min(beam, V):
//   - hypotheses wait for the frame they reached (last_frame); at frame t those that reached t
//     are expanded best first while any remain;
//   - an expansion takes log_softmax over the V+1 token logits and, separately, over the
//     duration logits; the top min(B, V-1) tokens (blank excluded) and top min(B, D) durations
//     make pairs scored token + duration, of which the top min(B, V-1) become new hypotheses
//     (a duration-0 one is expanded again at t, the others wait for t + duration); a blank
//     goes on with each of the top durations except 0 (0 alone becomes the smallest non-zero
//     duration), scored blank + duration, state and labels unchanged;
//   - after each expansion the waiting hypotheses with the same labels and last_frame merge
//     (log-add of their scores, the better one's history kept); then, if at least B waiting
//     hypotheses beat every one still to expand at t, those are kept and frame t ends; when
//     none is left to expand, the waiting ones are cut to the best B.
// Scores are float32 sums, in NeMo's order of operations (its scores are torch float32
// values). There is no max_symbols limit, as in NeMo.
#pragma once

#include <vector>

#include "model/decoder/beam_search.h"
#include "model/decoder/prediction_cache.h"

namespace pk {

// Hypotheses over frames [0, n_frames), sorted best first (see beam_search.h).
std::vector<BeamHypothesis> beam_tdt(PredictionCache& net, int n_frames, const BeamSearchOptions& options);

}  // namespace pk
