// StreamCarry: what a chunked stream's decoder carries from one chunk to the next, so that a
// stream decodes chunk by chunk exactly as NeMo's streaming script does (its
// BatchedLabelLoopingState for transducers; for CTC the label of the last frame).
#pragma once

#include <vector>

namespace pk {

struct TransducerCarry {
    // Prediction net LSTM state from which `last_token` runs (empty: zero, the stream start).
    std::vector<float> h, c;
    int last_token = -1;   // the last emitted token; -1: none yet (blank/SOS)
    int skip_frames = 0;   // TDT: frames the last duration jumped past the chunk's end; the next
                           // chunk starts at this local frame (NeMo's time_jumps)
};

struct CtcCarry {
    int previous_label = -1;  // label of the last decoded frame; -1: none yet (blank)
};

struct StreamCarry {
    TransducerCarry transducer;
    CtcCarry ctc;
};

}  // namespace pk
