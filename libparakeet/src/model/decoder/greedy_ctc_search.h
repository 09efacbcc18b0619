// The greedy CTC loop of greedy_ctc.h, with the choice of a frame's label left to a policy, so
// that hotword biasing (context_bias.h) runs the same rules as the plain search. The policy
// has `int choose(const float* row, int previous)` (a label in [0, n_classes), blank last;
// `previous` is the label of the frame before) and `void emitted(int label)` (called for every
// new token, i.e. a non-blank label that differs from the previous frame's).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/decoder/confidence.h"
#include "model/transcript/transcript.h"

namespace pk {

template <class Policy>
void greedy_ctc_search(const float* logits, int n_frames, int n_classes, const ConfidenceOptions& confidence,
                       int first_frame, int& previous, std::vector<TranscriptToken>& tokens, Policy& policy) {
    const int blank = n_classes - 1;
    for (int t = 0; t < n_frames; ++t) {
        const float* row = logits + static_cast<int64_t>(t) * n_classes;
        const int label = policy.choose(row, previous);
        if (label != blank) {
            const float conf = max_prob_confidence(row, n_classes, confidence);
            if (label != previous) {
                tokens.push_back({label, first_frame + t, 1, conf});
                policy.emitted(label);
            } else if (!tokens.empty() && tokens.back().id == label) {
                TranscriptToken& run = tokens.back();
                run.duration += 1;
                run.confidence = std::min(run.confidence, conf);
            }
        }
        previous = label;
    }
}

}  // namespace pk
