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

// NeMo 3.0.0 has two greedy TDT loops that decode alike except for one rule: when a frame's
// max_symbols-th step has a non-zero duration, GreedyTDTInfer (strategy "greedy") still adds
// the extra frame of the max_symbols rule, the label-looping GreedyBatchedTDTInfer
// ("greedy_batch", the default of NeMo's decoding config and of its Parakeet training configs)
// does not: it forces a frame only while it is still on the frame of max_symbols tokens.
// (A blank's step ends the visit either way; for RNN-T the two loops agree.)
enum class TdtLoop { Greedy, GreedyBatch };

struct GreedyOptions {
    int blank_id = 0;            // = vocab size; token logits are [0, blank_id]
    std::vector<int> durations;  // TDT durations in frames ({0, 1, 2, 3, 4}); empty for RNN-T
    int max_symbols = 10;        // symbols per frame; <= 0: unlimited (NeMo None)
    TdtLoop tdt_loop = TdtLoop::Greedy;
    ConfidenceOptions confidence;
};

}  // namespace pk
