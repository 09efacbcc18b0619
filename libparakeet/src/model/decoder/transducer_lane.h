// TransducerLane: one greedy search's state in the prediction and joint networks, and the
// products that advance any number of lanes at once. A lone search (transducer_decoder.cpp's
// ArenaSteps) runs them on its one lane; a batched decode (TransducerDecoder::decode_chunks)
// on the lanes of every stream of a batch round, so that each weight is read once per step for
// all of them. Every product runs each row on a path that gives it the bits of a lone row
// (kernels::single_row_path), so a lane's results are bitwise the same in a batch and alone.
#pragma once

#include <cstdint>

#include "model/decoder/joint.h"
#include "model/decoder/prediction_net.h"
#include "model/decoder/stream_carry.h"

namespace pk {

struct TransducerLane {
    // Buffers from `arena`; `carry` (may be null: the stream start) gives the state and the
    // token to continue from. enc_proj: the search's frames projected by the joint, [n, J].
    TransducerLane(Arena& arena, const PredictionNet& pred, const Joint& joint, const float* enc_proj, int blank_id,
                   const TransducerCarry* carry);

    // `token` (not the blank) was emitted: keep the state its step produced; the next step
    // runs on it.
    void emit(int token);
    // The state a next chunk continues from: (h, c) is the input state of the last emitted
    // token's step, which that chunk runs again (the same arithmetic, the same output).
    void save(TransducerCarry& carry, int64_t state_size) const;

    const float* enc_proj;
    // The prediction net runs lazily, when a joint needs its output: NeMo also runs it at the
    // next step, and the token emitted last then costs nothing.
    int pending;  // token the prediction net has yet to run on, or -1
    int last;     // the last emitted token (the carried one at a chunk's start), or -1
    float* h;     // the state after the last emitted token (zero at the start)
    float* c;
    float* h_next;  // the state of the step on the last pending token
    float* c_next;
    float* pred_proj;  // the joint's projection of that step's output
};

// Runs the prediction net on the pending tokens of lanes[0, n) (all must have one) and projects
// its outputs for the joint: one product per weight for all of them. Clears their pending.
void run_predictions(ThreadTeam& team, Arena& arena, const PredictionNet& pred, const Joint& joint,
                     TransducerLane* const* lanes, int64_t n);

// logits[i, joint.outputs()] of lanes[i] (no token pending) at encoder frame frames[i], i < n:
// one product for all of them.
void run_joints(ThreadTeam& team, Arena& arena, const Joint& joint, TransducerLane* const* lanes, const int* frames,
                int64_t n, float* logits);

}  // namespace pk
