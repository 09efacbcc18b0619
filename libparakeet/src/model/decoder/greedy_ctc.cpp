#include "model/decoder/greedy_ctc.h"

#include <algorithm>

#include "model/decoder/argmax.h"

namespace pk {

std::vector<TranscriptToken> greedy_ctc(const float* logits, int n_frames, int n_classes,
                                        const ConfidenceOptions& confidence) {
    const int blank = n_classes - 1;
    std::vector<TranscriptToken> out;
    int previous = blank;
    for (int t = 0; t < n_frames; ++t) {
        const float* row = logits + static_cast<int64_t>(t) * n_classes;
        const int label = argmax(row, n_classes);
        if (label != blank) {
            const float conf = max_prob_confidence(row, n_classes, confidence);
            if (label != previous) {
                out.push_back({label, t, 1, conf});
            } else {
                TranscriptToken& run = out.back();
                run.duration += 1;
                run.confidence = std::min(run.confidence, conf);
            }
        }
        previous = label;
    }
    return out;
}

}  // namespace pk
