#include "model/decoder/greedy_ctc.h"

#include <algorithm>

#include "model/decoder/argmax.h"

namespace pk {

void greedy_ctc_append(const float* logits, int n_frames, int n_classes, const ConfidenceOptions& confidence,
                       int first_frame, int& previous, std::vector<TranscriptToken>& tokens) {
    const int blank = n_classes - 1;
    for (int t = 0; t < n_frames; ++t) {
        const float* row = logits + static_cast<int64_t>(t) * n_classes;
        const int label = argmax(row, n_classes);
        if (label != blank) {
            const float conf = max_prob_confidence(row, n_classes, confidence);
            if (label != previous) {
                tokens.push_back({label, first_frame + t, 1, conf});
            } else if (!tokens.empty() && tokens.back().id == label) {
                TranscriptToken& run = tokens.back();
                run.duration += 1;
                run.confidence = std::min(run.confidence, conf);
            }
        }
        previous = label;
    }
}

std::vector<TranscriptToken> greedy_ctc(const float* logits, int n_frames, int n_classes,
                                        const ConfidenceOptions& confidence) {
    std::vector<TranscriptToken> out;
    int previous = n_classes - 1;
    greedy_ctc_append(logits, n_frames, n_classes, confidence, 0, previous, out);
    return out;
}

}  // namespace pk
