#include "model/decoder/context_bias.h"

#include <algorithm>

#include "model/decoder/greedy_ctc_search.h"
#include "model/decoder/greedy_tdt_search.h"

namespace pk {

ContextBiasPolicy::ContextBiasPolicy(const ContextGraph& graph, int top_m, int n_classes)
    : graph_(graph),
      top_m_(std::min(top_m > 0 ? top_m : kDefaultAcousticTopM, n_classes)),
      n_classes_(n_classes),
      top_(static_cast<size_t>(std::max(top_m_, 1))),
      seen_(static_cast<size_t>(n_classes), 0) {}

int ContextBiasPolicy::choose(const float* logits, int previous) {
    const int blank = n_classes_ - 1;
    if (++generation_ == 0) {  // wrapped: clear the marks
        std::fill(seen_.begin(), seen_.end(), 0u);
        generation_ = 1;
    }
    int best = -1;
    float best_score = 0.f;
    auto consider = [&](int label) {
        if (label < 0 || label >= n_classes_ || seen_[static_cast<size_t>(label)] == generation_) return;
        seen_[static_cast<size_t>(label)] = generation_;
        ++stats_.candidate_checks;
        float score = logits[label];
        if (label != blank && label != previous) score += graph_.transition(state_, label).delta;
        if (best < 0 || score > best_score) best = label, best_score = score;
    };
    // The acoustic top-M, best first (ties: the lower label, as argmax takes it), in one scan:
    // a label enters only when it beats the M-th so far, and moves up past strictly smaller ones.
    int* top = top_.data();
    int n_top = 0;
    for (int label = 0; label < n_classes_; ++label) {
        const float v = logits[label];
        if (n_top == top_m_ && !(v > logits[top[n_top - 1]])) continue;
        int i = n_top < top_m_ ? n_top++ : top_m_ - 1;
        for (; i > 0 && v > logits[top[i - 1]]; --i) top[i] = top[i - 1];
        top[i] = label;
    }
    for (int i = 0; i < n_top; ++i) consider(top[i]);
    for (const ContextArc* a = graph_.arcs_begin(state_); a != graph_.arcs_end(state_); ++a) consider(a->token);
    consider(blank);
    return best;
}

void ContextBiasPolicy::emitted(int token) {
    const ContextGraph::Step step = graph_.transition(state_, token);
    state_ = step.state;
    ++stats_.transitions;
    if (step.completed) ++stats_.completed_phrases;
    if (step.failed) ++stats_.failed_prefixes;
}

ContextStats ContextBiasPolicy::stats() const {
    ContextStats s = stats_;
    s.final_rollback = graph_.finalize(state_);
    return s;
}

std::vector<TranscriptToken> greedy_tdt_biased(TransducerSteps& net, int n_frames, const GreedyOptions& options,
                                               const ContextGraph& graph, int top_m, ContextStats* stats) {
    ContextBiasPolicy policy(graph, top_m, options.blank_id + 1);
    std::vector<TranscriptToken> out = greedy_tdt_search(net, n_frames, options, 0, nullptr, policy);
    if (stats != nullptr) *stats = policy.stats();
    return out;
}

std::vector<TranscriptToken> greedy_ctc_biased(const float* logits, int n_frames, int n_classes,
                                               const ConfidenceOptions& confidence, const ContextGraph& graph,
                                               int top_m, ContextStats* stats) {
    ContextBiasPolicy policy(graph, top_m, n_classes);
    std::vector<TranscriptToken> out;
    int previous = n_classes - 1;
    greedy_ctc_search(logits, n_frames, n_classes, confidence, 0, previous, out, policy);
    if (stats != nullptr) *stats = policy.stats();
    return out;
}

}  // namespace pk
