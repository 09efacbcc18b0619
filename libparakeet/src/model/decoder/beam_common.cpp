#include "model/decoder/beam_common.h"

#include <algorithm>
#include <cmath>

namespace pk {

std::vector<TranscriptToken> TokenTrail::tokens(int last) const {
    std::vector<TranscriptToken> out;
    for (int i = last; i >= 0; i = entries_[static_cast<size_t>(i)].prev)
        out.push_back(entries_[static_cast<size_t>(i)].token);
    std::reverse(out.begin(), out.end());
    return out;
}

void log_softmax(const float* x, int n, float* out) {
    float top = x[0];
    for (int i = 1; i < n; ++i) top = std::fmax(top, x[i]);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i]) - top);
    const double lse = top + std::log(sum);
    for (int i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<double>(x[i]) - lse);
}

void top_k(const float* x, int n, int k, std::vector<int>& out) {
    out.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)] = i;
    k = std::min(k, n);
    std::partial_sort(out.begin(), out.begin() + k, out.end(),
                      [x](int a, int b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
    out.resize(static_cast<size_t>(k));
}

float log_add_exp(float a, float b) {
    if (std::isinf(a) && a == b) return a;
    const float m = std::max(a, b);
    return m + std::log1p(std::exp(-std::fabs(a - b)));
}

BeamHypothesis make_hypothesis(const TokenTrail& trail, int last, double score) {
    BeamHypothesis h;
    h.tokens = trail.tokens(last);
    h.score = score;
    h.normalized_score = score / static_cast<double>(h.tokens.size() + 1);
    return h;
}

void sort_nbest(std::vector<BeamHypothesis>& hyps, bool score_norm) {
    std::stable_sort(hyps.begin(), hyps.end(), [score_norm](const BeamHypothesis& a, const BeamHypothesis& b) {
        return score_norm ? a.normalized_score > b.normalized_score : a.score > b.score;
    });
}

}  // namespace pk
