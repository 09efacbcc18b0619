// Hotword (context) biasing of greedy decoding, as parakeet.cpp's contextual greedy TDT and
// CTC decoders do it: at each TDT step (CTC frame) the candidates are the acoustic top-M
// labels, the graph's continuations from the current state and the blank; each scores its
// logit plus the graph's transition delta (the blank, and a CTC repeat of the previous label,
// which emits nothing, score their logit alone) and the best wins. Emitted tokens move the
// graph. A logit and its log-softmax differ by one constant per step, so the choice is the one
// parakeet.cpp makes on log-probabilities. Durations and confidences stay the acoustic ones.
#pragma once

#include <vector>

#include "model/decoder/context_graph.h"
#include "model/decoder/transducer_steps.h"
#include "model/transcript/transcript.h"

namespace pk {

constexpr int kDefaultAcousticTopM = 8;

// Picks labels for greedy_tdt_search / greedy_ctc_search and keeps the graph state and the
// statistics.
class ContextBiasPolicy {
public:
    // n_classes: labels per step (V + 1, blank last); top_m <= 0 means kDefaultAcousticTopM.
    ContextBiasPolicy(const ContextGraph& graph, int top_m, int n_classes);

    int choose(const float* logits) { return choose(logits, -1); }
    // `previous`: a label that scores without a transition (a CTC repeat), or -1.
    int choose(const float* logits, int previous);
    void emitted(int token);

    // The statistics so far, with the final rollback of the current state.
    ContextStats stats() const;

private:
    const ContextGraph& graph_;
    int top_m_;
    int n_classes_;
    int state_ = ContextGraph::kRoot;
    ContextStats stats_;
    std::vector<int> top_;           // the step's acoustic top-M labels, best first
    std::vector<unsigned> seen_;     // generation marks: a candidate is scored once per step
    unsigned generation_ = 0;
};

// Greedy TDT (greedy_tdt.h rules) biased by `graph`.
std::vector<TranscriptToken> greedy_tdt_biased(TransducerSteps& net, int n_frames, const GreedyOptions& options,
                                               const ContextGraph& graph, int top_m, ContextStats* stats);

// Greedy CTC (greedy_ctc.h rules) on logits [n_frames, n_classes] biased by `graph`.
std::vector<TranscriptToken> greedy_ctc_biased(const float* logits, int n_frames, int n_classes,
                                               const ConfidenceOptions& confidence, const ContextGraph& graph,
                                               int top_m, ContextStats* stats);

}  // namespace pk
