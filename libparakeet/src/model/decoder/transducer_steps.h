// TransducerSteps: what a greedy transducer search needs from the prediction and joint
// networks, and nothing more — so the search rules (greedy_tdt.h, greedy_rnnt.h) can be
// tested against scripted logits, apart from the networks.
#pragma once

#include <vector>

#include "model/decoder/confidence.h"

namespace pk {

class TransducerSteps {
public:
    virtual ~TransducerSteps() = default;

    // Joint logits of encoder frame `frame` against the prediction net's output for the last
    // emitted token (blank/SOS with a zero state before the first). Layout: blank_id + 1 token
    // logits (blank last), then one logit per TDT duration. Valid until the next call.
    virtual const float* joint(int frame) = 0;

    // `token` (not the blank) was emitted: keep the state it was predicted from and run the
    // prediction net on it. A blank changes nothing (NeMo discards the state of a blank step).
    virtual void emit(int token) = 0;
};

struct GreedyOptions {
    int blank_id = 0;            // = vocab size; token logits are [0, blank_id]
    std::vector<int> durations;  // TDT durations in frames ({0, 1, 2, 3, 4}); empty for RNN-T
    int max_symbols = 10;        // symbols per frame; <= 0: unlimited (NeMo None)
    ConfidenceOptions confidence;
};

}  // namespace pk
