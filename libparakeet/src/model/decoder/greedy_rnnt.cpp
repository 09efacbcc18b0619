#include "model/decoder/greedy_rnnt.h"

#include "model/decoder/argmax.h"

namespace pk {

std::vector<TranscriptToken> greedy_rnnt(TransducerSteps& net, int n_frames, const GreedyOptions& o) {
    const int n_tokens = o.blank_id + 1;
    std::vector<TranscriptToken> out;
    for (int t = 0; t < n_frames; ++t) {
        for (int symbols = 0; o.max_symbols <= 0 || symbols < o.max_symbols; ++symbols) {
            const float* logits = net.joint(t);
            const int token = argmax(logits, n_tokens);
            if (token == o.blank_id) break;
            out.push_back({token, t, 1, max_prob_confidence(logits, n_tokens, o.confidence)});
            net.emit(token);
        }
    }
    return out;
}

}  // namespace pk
