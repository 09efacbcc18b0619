// Pieces the TDT and RNN-T beam searches share: the hypotheses' token histories, the
// log-softmax and top-k they take of a joint output, and the final hypotheses.
#pragma once

#include <algorithm>
#include <vector>

#include "model/decoder/beam_search.h"

namespace pk {

// Token histories as a forest of emissions: a hypothesis holds the index of its last
// emission (-1: none), so copying or extending a hypothesis is O(1).
class TokenTrail {
public:
    int push(int prev, const TranscriptToken& token) {
        entries_.push_back({token, prev});
        return static_cast<int>(entries_.size()) - 1;
    }
    // The tokens of the history ending at `last`, oldest first.
    std::vector<TranscriptToken> tokens(int last) const;

private:
    struct Entry {
        TranscriptToken token;
        int prev;
    };
    std::vector<Entry> entries_;
};

// out[i] = x[i] - logsumexp(x[0, n)), as torch.log_softmax (sums in double, rounded once).
void log_softmax(const float* x, int n, float* out);

// Indices of the k largest of x[0, n), largest first (torch.topk, sorted); equal values keep
// index order.
void top_k(const float* x, int n, int k, std::vector<int>& out);

// torch.logaddexp on float32 scalars.
float log_add_exp(float a, float b);

// A final hypothesis: its tokens, score and normalized score (NeMo divides by the sequence
// length including the start-of-sequence blank).
BeamHypothesis make_hypothesis(const TokenTrail& trail, int last, double score);

// Index of the first hypothesis with the largest score (Python's max(hyps, key=score)).
template <class Hyp>
size_t first_max(const std::vector<Hyp>& hyps) {
    size_t best = 0;
    for (size_t i = 1; i < hyps.size(); ++i)
        if (hyps[i].score > hyps[best].score) best = i;
    return best;
}

// NeMo's frame-end rule: when at least `beam` waiting hypotheses (`kept`) score above
// `best_left`, the best score still to expand at this frame, those alone go on, worst first
// (Python's sorted()), and the frame ends (returns true).
template <class Hyp, class Score>
bool end_frame_if_beaten(std::vector<Hyp>& kept, Score best_left, int beam) {
    std::vector<Hyp> most;
    for (const Hyp& h : kept)
        if (h.score > best_left) most.push_back(h);
    if (static_cast<int>(most.size()) < beam) return false;
    std::stable_sort(most.begin(), most.end(), [](const Hyp& a, const Hyp& b) { return a.score < b.score; });
    kept.swap(most);
    return true;
}

// The search's final hypotheses, sorted by sort_nbest.
template <class Hyp>
std::vector<BeamHypothesis> final_hypotheses(const std::vector<Hyp>& kept, const TokenTrail& trail, bool score_norm) {
    std::vector<BeamHypothesis> out;
    for (const Hyp& h : kept) out.push_back(make_hypothesis(trail, h.trail, h.score));
    sort_nbest(out, score_norm);
    return out;
}

}  // namespace pk
