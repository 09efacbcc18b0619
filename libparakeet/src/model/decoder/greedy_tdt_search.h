// The greedy TDT loop of greedy_tdt.h, with the choice of a step's token left to a policy, so
// that hotword biasing (context_bias.h) runs the same rules as the plain search. The policy
// has `int choose(const float* logits)` (a token in [0, blank_id]) and `void emitted(int token)`
// (called for every non-blank token); the plain search's argmax policy inlines to the loop it
// always was. The rules themselves are GreedyCursor's (greedy_cursor.h).
#pragma once

#include <vector>

#include "model/decoder/greedy_cursor.h"
#include "model/decoder/transducer_steps.h"
#include "model/transcript/transcript.h"

namespace pk {

template <class Policy>
std::vector<TranscriptToken> greedy_tdt_search(TransducerSteps& net, int n_frames, const GreedyOptions& o,
                                               int first_frame, int* end_frame, Policy& policy) {
    std::vector<TranscriptToken> out;
    GreedyCursor cursor(o, n_frames, first_frame);
    while (!cursor.done()) {
        const float* logits = net.joint(cursor.frame());
        const int token = policy.choose(logits);
        if (cursor.advance(logits, token, out)) {
            net.emit(token);
            policy.emitted(token);
        }
    }
    if (end_frame != nullptr) *end_frame = cursor.end_frame();
    return out;
}

}  // namespace pk
