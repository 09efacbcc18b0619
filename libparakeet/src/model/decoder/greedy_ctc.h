// Greedy CTC decoding as NeMo 3.0.0 does it (ctc_greedy_decoding.py _greedy_decode_logprobs,
// ctc_decoding.py decode_hypothesis / compute_confidence): per frame the argmax over the V+1
// classes (blank last); a run of equal non-blank labels is one token, blanks are dropped.
// A token's frame is the first frame of its run, its duration the run's length, and its
// confidence the minimum (aggregation "min") of the per-frame max_prob confidences over the
// run (blank frames excluded).
#pragma once

#include <cstdint>
#include <vector>

#include "model/decoder/confidence.h"
#include "model/transcript.h"

namespace pk {

// logits: [n_frames, n_classes] row-major, blank = n_classes - 1.
std::vector<TranscriptToken> greedy_ctc(const float* logits, int n_frames, int n_classes,
                                        const ConfidenceOptions& confidence);

}  // namespace pk
