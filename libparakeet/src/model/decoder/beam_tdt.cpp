#include "model/decoder/beam_tdt.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>

#include "model/decoder/beam_common.h"

namespace pk {
namespace {

struct Hyp {
    float score;
    int node;        // label sequence (PredictionCache node)
    int last_frame;  // the frame it is expanded at
    int trail;       // last emission (TokenTrail), -1: none
};

// NeMo's merge_duplicate_hypotheses: sorted best first (stable), then the first of each
// (labels, last_frame) absorbs the later ones' scores; first-seen order.
std::vector<Hyp> merge_duplicates(std::vector<Hyp> hyps) {
    std::stable_sort(hyps.begin(), hyps.end(), [](const Hyp& a, const Hyp& b) { return a.score > b.score; });
    std::vector<Hyp> out;
    std::unordered_map<uint64_t, size_t> seen;
    for (const Hyp& h : hyps) {
        const uint64_t key = (static_cast<uint64_t>(h.node) << 32) | static_cast<uint32_t>(h.last_frame);
        const auto it = seen.find(key);
        if (it == seen.end()) {
            seen.emplace(key, out.size());
            out.push_back(h);
        } else {
            out[it->second].score = log_add_exp(out[it->second].score, h.score);
        }
    }
    return out;
}

}  // namespace

std::vector<BeamHypothesis> beam_tdt(PredictionCache& net, int n_frames, const BeamSearchOptions& o) {
    const int V = o.blank_id;
    const int D = static_cast<int>(o.durations.size());
    const int beam = std::min(o.beam_size, V);
    const int beam_k = std::min(beam, V - 1);
    const int durations_k = std::min(beam, D);
    int zero_idx = -1, min_nonzero_idx = -1;
    for (int i = 0; i < D; ++i) {
        const int d = o.durations[static_cast<size_t>(i)];
        if (d == 0 && zero_idx < 0) zero_idx = i;
        if (d != 0 && (min_nonzero_idx < 0 || d < o.durations[static_cast<size_t>(min_nonzero_idx)])) min_nonzero_idx = i;
    }
    // A blank must advance; the model loader refuses duration sets without a non-zero entry.
    if (min_nonzero_idx < 0) throw std::logic_error("beam_tdt: the TDT durations hold no non-zero entry");

    TokenTrail trail;
    std::vector<float> logp(static_cast<size_t>(V + 1)), dlogp(static_cast<size_t>(D));
    std::vector<float> pair_logp(static_cast<size_t>(beam_k * durations_k));
    std::vector<int> tokens, durations, pairs, live;
    std::vector<Hyp> kept{{0.0f, PredictionCache::kRoot, 0, -1}}, hyps;

    for (int t = 0; t < n_frames; ++t) {
        if (o.on_frame) o.on_frame(t, n_frames);
        hyps.clear();
        std::vector<Hyp> later;
        for (const Hyp& h : kept) (h.last_frame == t ? hyps : later).push_back(h);
        kept.swap(later);
        live.clear();
        for (const Hyp& h : kept) live.push_back(h.node);
        for (const Hyp& h : hyps) live.push_back(h.node);
        net.retain(live);

        while (!hyps.empty()) {
            const size_t best = first_max(hyps);
            const Hyp max_hyp = hyps[best];
            hyps.erase(hyps.begin() + static_cast<std::ptrdiff_t>(best));

            const float* logits = net.joint(t, max_hyp.node);
            log_softmax(logits, V + 1, logp.data());
            log_softmax(logits + V + 1, D, dlogp.data());
            const float conf = max_prob_confidence(logits, V + 1, o.confidence);
            top_k(logp.data(), V, beam_k, tokens);  // blank (index V) excluded
            top_k(dlogp.data(), D, durations_k, durations);
            // torch.cartesian_prod(durations, tokens): pair i = (duration i / beam_k, token i % beam_k)
            for (int d = 0; d < durations_k; ++d)
                for (int k = 0; k < beam_k; ++k)
                    pair_logp[static_cast<size_t>(d * beam_k + k)] =
                        dlogp[static_cast<size_t>(durations[static_cast<size_t>(d)])] +
                        logp[static_cast<size_t>(tokens[static_cast<size_t>(k)])];
            top_k(pair_logp.data(), beam_k * durations_k, beam_k, pairs);

            for (int p : pairs) {
                const int token = tokens[static_cast<size_t>(p % beam_k)];
                const int duration = o.durations[static_cast<size_t>(durations[static_cast<size_t>(p / beam_k)])];
                Hyp h{max_hyp.score + pair_logp[static_cast<size_t>(p)], net.child(max_hyp.node, token),
                      max_hyp.last_frame + duration, trail.push(max_hyp.trail, {token, t, duration, conf})};
                (duration == 0 ? hyps : kept).push_back(h);
            }
            for (int idx : durations) {  // blank: never with duration 0
                if (idx == zero_idx) {
                    if (durations_k != 1) continue;
                    idx = min_nonzero_idx;
                }
                const float score = (max_hyp.score + logp[static_cast<size_t>(V)]) + dlogp[static_cast<size_t>(idx)];
                kept.push_back({score, max_hyp.node, max_hyp.last_frame + o.durations[static_cast<size_t>(idx)],
                                max_hyp.trail});
            }
            kept = merge_duplicates(std::move(kept));

            if (!hyps.empty()) {
                if (end_frame_if_beaten(kept, hyps[first_max(hyps)].score, beam)) break;
            } else {
                std::stable_sort(kept.begin(), kept.end(), [](const Hyp& a, const Hyp& b) { return a.score > b.score; });
                if (static_cast<int>(kept.size()) > beam) kept.resize(static_cast<size_t>(beam));
            }
        }
    }

    return final_hypotheses(kept, trail, o.score_norm);
}

}  // namespace pk
