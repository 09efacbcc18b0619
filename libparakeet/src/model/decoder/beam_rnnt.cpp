#include "model/decoder/beam_rnnt.h"

#include <algorithm>

#include "model/decoder/argmax.h"
#include "model/decoder/beam_common.h"

namespace pk {
namespace {

struct Hyp {
    double score;
    int node;   // label sequence (PredictionCache node)
    int trail;  // last emission (TokenTrail), -1: none
};

// NeMo's hard-coded symbol limit per frame in BeamRNNTInfer.greedy_search.
constexpr int kGreedySearchMaxSymbols = 5;

std::vector<BeamHypothesis> greedy_search(PredictionCache& net, int n_frames, const BeamSearchOptions& o) {
    const int V = o.blank_id;
    std::vector<float> logp(static_cast<size_t>(V + 1));
    TokenTrail trail;
    Hyp hyp{0.0, PredictionCache::kRoot, -1};
    for (int t = 0; t < n_frames; ++t) {
        if (o.on_frame) o.on_frame(t, n_frames);
        for (int symbols = 0; symbols < kGreedySearchMaxSymbols; ++symbols) {
            const float* logits = net.joint(t, hyp.node);
            log_softmax(logits, V + 1, logp.data());
            const int pred = argmax(logp.data(), V + 1);
            if (pred == V) break;
            hyp.score += static_cast<double>(logp[static_cast<size_t>(pred)]);
            hyp.node = net.child(hyp.node, pred);
            hyp.trail = trail.push(hyp.trail, {pred, t, 1, max_prob_confidence(logits, V + 1, o.confidence)});
        }
        net.retain({hyp.node});
    }
    return {make_hypothesis(trail, hyp.trail, hyp.score)};
}

}  // namespace

std::vector<BeamHypothesis> beam_rnnt(PredictionCache& net, int n_frames, const BeamSearchOptions& o) {
    if (o.beam_size == 1) return greedy_search(net, n_frames, o);
    const int V = o.blank_id;
    const int beam = std::min(o.beam_size, V);
    const int beam_k = std::min(beam, V - 1);

    TokenTrail trail;
    std::vector<float> logp(static_cast<size_t>(V + 1));
    std::vector<int> tokens, live;
    std::vector<Hyp> kept{{0.0, PredictionCache::kRoot, -1}}, hyps;

    for (int t = 0; t < n_frames; ++t) {
        if (o.on_frame) o.on_frame(t, n_frames);
        hyps.swap(kept);
        kept.clear();
        live.clear();
        for (const Hyp& h : hyps) live.push_back(h.node);
        net.retain(live);

        for (;;) {
            const size_t best = first_max(hyps);
            const Hyp max_hyp = hyps[best];
            hyps.erase(hyps.begin() + static_cast<std::ptrdiff_t>(best));

            const float* logits = net.joint(t, max_hyp.node);
            log_softmax(logits, V + 1, logp.data());
            const float conf = max_prob_confidence(logits, V + 1, o.confidence);
            top_k(logp.data(), V, beam_k, tokens);  // blank (index V) excluded
            for (int k : tokens)
                hyps.push_back({max_hyp.score + static_cast<double>(logp[static_cast<size_t>(k)]),
                                net.child(max_hyp.node, k), trail.push(max_hyp.trail, {k, t, 1, conf})});
            kept.push_back({max_hyp.score + static_cast<double>(logp[static_cast<size_t>(V)]), max_hyp.node,
                            max_hyp.trail});

            if (end_frame_if_beaten(kept, hyps[first_max(hyps)].score, beam)) break;
        }
    }

    return final_hypotheses(kept, trail, o.score_norm);
}

}  // namespace pk
