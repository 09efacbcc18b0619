#include "model/decoder/greedy_ctc.h"

#include "model/decoder/argmax.h"
#include "model/decoder/greedy_ctc_search.h"

namespace pk {
namespace {

struct ArgmaxPolicy {
    int n_classes;
    int choose(const float* row, int) const { return argmax(row, n_classes); }
    void emitted(int) const {}
};

}  // namespace

void greedy_ctc_append(const float* logits, int n_frames, int n_classes, const ConfidenceOptions& confidence,
                       int first_frame, int& previous, std::vector<TranscriptToken>& tokens) {
    ArgmaxPolicy policy{n_classes};
    greedy_ctc_search(logits, n_frames, n_classes, confidence, first_frame, previous, tokens, policy);
}

std::vector<TranscriptToken> greedy_ctc(const float* logits, int n_frames, int n_classes,
                                        const ConfidenceOptions& confidence) {
    std::vector<TranscriptToken> out;
    int previous = n_classes - 1;
    greedy_ctc_append(logits, n_frames, n_classes, confidence, 0, previous, out);
    return out;
}

}  // namespace pk
