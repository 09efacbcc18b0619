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
#include "model/transcript/transcript.h"

namespace pk {

// logits: [n_frames, n_classes] row-major, blank = n_classes - 1.
std::vector<TranscriptToken> greedy_ctc(const float* logits, int n_frames, int n_classes,
                                        const ConfidenceOptions& confidence);

// The same over a stream of chunks: appends the tokens of n_frames more frames to `tokens`,
// numbering the frames from `first_frame`. `previous` is the label of the frame before (-1 or
// blank: none) and is updated, so a run that continues across the chunk border extends the
// token that began it (when that token is tokens.back(); a caller that removed it, such as a
// stream taking out <EOU>, gets the run dropped).
void greedy_ctc_append(const float* logits, int n_frames, int n_classes, const ConfidenceOptions& confidence,
                       int first_frame, int& previous, std::vector<TranscriptToken>& tokens);

}  // namespace pk
