// Beam search over a transducer head, as NeMo 3.0.0's per-sample `beam` strategy does it:
// BeamTDTInfer.default_beam_search (tdt_beam_decoding.py) for TDT and
// BeamRNNTInfer.default_beam_search / greedy_search (rnnt_beam_decoding.py) for RNN-T.
// beam_tdt.h and beam_rnnt.h hold the search rules; prediction_cache.h the networks they step.
//
// What every search returns: NeMo's final hypotheses, sorted as its sort_nbest sorts them
// (by score / (tokens + 1) with score_norm — NeMo counts the start-of-sequence blank — else by
// score; stable, so equal keys keep NeMo's list order). NeMo returns all of them (there may be
// more than beam_size); the caller keeps the first n.
#pragma once

#include <functional>
#include <vector>

#include "model/decoder/confidence.h"
#include "model/transcript/transcript.h"

namespace pk {

struct BeamOptions {
    int beam_size = 0;      // <= 0: greedy decoding (no beam search); >= 1: NeMo's beam strategy
    int nbest = 1;          // hypotheses an n-best caller keeps (1 <= nbest <= beam_size)
    bool score_norm = true; // NeMo's score_norm: rank by score / (tokens + 1)
};

struct BeamSearchOptions {
    int beam_size = 1;
    // Called at the start of every frame t (of n); may throw (Cancelled) to stop the search.
    std::function<void(int t, int n)> on_frame;
    bool score_norm = true;
    int blank_id = 0;            // = vocab size; token logits are [0, blank_id]
    std::vector<int> durations;  // TDT durations in frames; empty for RNN-T
    ConfidenceOptions confidence;
};

struct BeamHypothesis {
    // Emitted tokens: frame = where the token was emitted, duration = its TDT duration (RNN-T 1);
    // NeMo's hypothesis timestamp is frame + duration for TDT and frame for RNN-T.
    std::vector<TranscriptToken> tokens;
    double score = 0.0;             // NeMo's hypothesis score (sum of log-probabilities)
    double normalized_score = 0.0;  // score / (tokens + 1)
};

// NeMo's sort_nbest: stable, best first.
void sort_nbest(std::vector<BeamHypothesis>& hyps, bool score_norm);

}  // namespace pk
