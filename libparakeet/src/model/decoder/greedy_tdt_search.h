// The greedy TDT loop of greedy_tdt.h, with the choice of a step's token left to a policy, so
// that hotword biasing (context_bias.h) runs the same rules as the plain search. The policy
// has `int choose(const float* logits)` (a token in [0, blank_id]) and `void emitted(int token)`
// (called for every non-blank token); the plain search's argmax policy inlines to the loop it
// always was.
#pragma once

#include <vector>

#include "model/decoder/argmax.h"
#include "model/decoder/transducer_steps.h"
#include "model/transcript/transcript.h"

namespace pk {

template <class Policy>
std::vector<TranscriptToken> greedy_tdt_search(TransducerSteps& net, int n_frames, const GreedyOptions& o,
                                               int first_frame, int* end_frame, Policy& policy) {
    const int n_tokens = o.blank_id + 1;
    const int n_durations = static_cast<int>(o.durations.size());
    const bool capped = o.max_symbols > 0;
    std::vector<TranscriptToken> out;

    int t = first_frame;
    while (t < n_frames) {
        int symbols = 0;
        for (;;) {
            if (capped && symbols == o.max_symbols) {  // the visit ran out of symbols
                t += 1;
                break;
            }
            const float* logits = net.joint(t);
            const int token = policy.choose(logits);
            const int duration = o.durations[static_cast<size_t>(argmax(logits + n_tokens, n_durations))];
            if (token == o.blank_id && duration == 0) {  // see greedy_tdt.h: NeMo's repeats end here
                t += 1;
                break;
            }
            if (token != o.blank_id) {
                out.push_back({token, t, duration, max_prob_confidence(logits, n_tokens, o.confidence)});
                net.emit(token);
                policy.emitted(token);
            }
            ++symbols;
            t += duration;
            if (duration != 0) {
                if (capped && symbols == o.max_symbols && o.tdt_loop == TdtLoop::Greedy) t += 1;
                break;
            }
        }
    }
    if (end_frame != nullptr) *end_frame = t;
    return out;
}

}  // namespace pk
