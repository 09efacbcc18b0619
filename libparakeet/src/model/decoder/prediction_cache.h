// PredictionCache: the prediction net and joint as a transducer beam search steps them — one
// request's hypotheses share label prefixes, and the prediction net's output for a label
// sequence depends on that sequence alone, so it is computed once per sequence (NeMo's
// decoder.score_hypothesis keeps the same cache, keyed by the sequence).
//
// Sequences are the nodes of a prefix tree (node 0 = the start-of-sequence blank); a node's
// slot, computed on first use, holds the LSTM state after its last label and the joint's
// projection of the prediction net's output. Slots come from the request's arena and are
// recycled by retain(): a slot only live hypotheses can reach is kept, so memory follows the
// beam, not the length of the audio. A dropped slot that is needed again is recomputed with
// the same arithmetic, so results never depend on what was dropped.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/decoder/joint.h"
#include "model/decoder/prediction_net.h"

namespace pk {

class PredictionCache {
public:
    // enc_proj: [frames, joint.hidden()] (the joint's encoder projection of every frame).
    PredictionCache(ThreadTeam& team, Arena& arena, const PredictionNet& pred, const Joint& joint,
                    const float* enc_proj, int blank_id);

    static constexpr int kRoot = 0;

    // The node of sequence(node) + token (created on first use; no computation).
    int child(int node, int token);
    // Joint logits (V+1 token logits, blank last, then the TDT duration logits) of `frame`
    // against the prediction net's output for `node`'s sequence. Valid until the next call.
    const float* joint(int frame, int node);
    // Keeps the slots of `live` nodes and of their parents (a hypothesis on a node not yet
    // computed steps from its parent's state); the others are recycled.
    void retain(const std::vector<int>& live);

    int outputs() const { return joint_.outputs(); }

private:
    struct Node {
        int parent;
        int token;
        int slot = -1;
    };
    struct Slot {
        float* h;
        float* c;
        float* pred_proj;
        int owner;  // node, or -1 when free
    };
    void compute(int node);
    int new_slot(int owner);

    ThreadTeam& team_;
    Arena& arena_;
    const PredictionNet& pred_;
    const Joint& joint_;
    const float* enc_proj_;
    std::vector<Node> nodes_;
    std::unordered_map<uint64_t, int> children_;  // (parent << 32 | token) -> node
    std::vector<Slot> slots_;
    std::vector<int> free_slots_;
    std::vector<char> mark_;
    float* zero_state_;
    float* logits_;
};

}  // namespace pk
