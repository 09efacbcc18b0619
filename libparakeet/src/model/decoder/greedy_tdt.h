// Greedy TDT search, step for step what NeMo 3.0.0's GreedyTDTInfer._greedy_decode does
// (nemo/collections/asr/parts/submodules/rnnt_greedy_decoding.py):
//   - t = 0; while t < n_frames: run steps at frame t while the predicted duration is 0 and
//     fewer than max_symbols steps were taken at this visit of the frame;
//   - a step: token = argmax of the V+1 token logits, duration = durations[argmax of the
//     duration logits]; a non-blank token is emitted at frame t with that duration (and the
//     prediction net advances on it); a blank is not (its state is discarded) but its duration
//     still applies; t += duration after every step;
//   - when the visit took max_symbols steps, t advances one more frame (also when the last
//     step's duration was not 0: then t moves duration + 1 — unless options.tdt_loop is
//     GreedyBatch, see transducer_steps.h).
// A blank with duration 0 makes NeMo repeat the identical step until max_symbols and then
// advance one frame; this search advances one frame at once, which gives the same result
// (and, with no max_symbols, terminates where NeMo would loop forever).
#pragma once

#include <vector>

#include "model/decoder/transducer_steps.h"
#include "model/transcript/transcript.h"

namespace pk {

// Tokens of frames [first_frame, n_frames); options.durations must not be empty. `end_frame`
// (when given) receives the frame the search stopped at: n_frames or, when the last duration
// jumped past the end, beyond it (a chunked stream starts its next chunk that far in).
std::vector<TranscriptToken> greedy_tdt(TransducerSteps& net, int n_frames, const GreedyOptions& options,
                                        int first_frame = 0, int* end_frame = nullptr);

}  // namespace pk
