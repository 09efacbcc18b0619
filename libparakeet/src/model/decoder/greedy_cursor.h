// GreedyCursor: the greedy TDT and RNN-T search rules (greedy_tdt.h, greedy_rnnt.h) as a
// resumable state machine. A search asks the cursor which frame the next joint evaluation is
// at, evaluates it however it likes and hands the logits back; so the lone search drives one
// cursor against its networks, and a batched decode (transducer_decoder.h, decode_chunks)
// advances the cursors of many streams in lockstep, evaluating all their joints as one product.
#pragma once

#include <vector>

#include "model/decoder/transducer_steps.h"
#include "model/transcript/transcript.h"

namespace pk {

class GreedyCursor {
public:
    // A search of frames [first_frame, n_frames); a TDT search when options.durations is not
    // empty (first_frame is 0 for RNN-T). `options` must outlive the cursor.
    GreedyCursor(const GreedyOptions& options, int n_frames, int first_frame = 0);

    bool done() const { return t_ >= n_frames_; }
    // The frame of the next joint evaluation (while !done()).
    int frame() const { return t_; }
    // Where the search stopped once done(): n_frames or, when a TDT duration jumped past the
    // end, beyond it.
    int end_frame() const { return t_; }

    // Takes the logits of the joint at frame() and the token chosen from them (argmax, or a
    // biasing policy's choice); appends an emitted token to `out`. Returns whether `token` was
    // emitted (not the blank): the prediction net must then advance on it.
    bool advance(const float* logits, int token, std::vector<TranscriptToken>& out);

private:
    // A visit that took max_symbols steps ends: the search moves one frame on.
    void end_full_visit();

    const GreedyOptions& o_;
    const int n_frames_;
    const bool tdt_;
    int t_;
    int symbols_ = 0;  // steps taken at this visit of frame t_
};

}  // namespace pk
