#include "model/decoder/prediction_cache.h"

#include <cstring>

namespace pk {

PredictionCache::PredictionCache(ThreadTeam& team, Arena& arena, const PredictionNet& pred, const Joint& joint,
                                 const float* enc_proj, int blank_id)
    : team_(team), arena_(arena), pred_(pred), joint_(joint), enc_proj_(enc_proj) {
    nodes_.push_back({-1, blank_id});
    const size_t state = static_cast<size_t>(pred.state_size());
    zero_state_ = arena.alloc_array<float>(state);
    std::memset(zero_state_, 0, state * sizeof(float));
    logits_ = arena.alloc_array<float>(static_cast<size_t>(joint.outputs()));
}

int PredictionCache::child(int node, int token) {
    const uint64_t key = (static_cast<uint64_t>(node) << 32) | static_cast<uint32_t>(token);
    const auto it = children_.find(key);
    if (it != children_.end()) return it->second;
    const int id = static_cast<int>(nodes_.size());
    nodes_.push_back({node, token});
    children_.emplace(key, id);
    return id;
}

int PredictionCache::new_slot(int owner) {
    if (!free_slots_.empty()) {
        const int s = free_slots_.back();
        free_slots_.pop_back();
        slots_[static_cast<size_t>(s)].owner = owner;
        return s;
    }
    const size_t state = static_cast<size_t>(pred_.state_size());
    Slot s;
    s.h = arena_.alloc_array<float>(state);
    s.c = arena_.alloc_array<float>(state);
    s.pred_proj = arena_.alloc_array<float>(static_cast<size_t>(joint_.hidden()));
    s.owner = owner;
    slots_.push_back(s);
    return static_cast<int>(slots_.size()) - 1;
}

void PredictionCache::compute(int node) {
    if (nodes_[static_cast<size_t>(node)].slot >= 0) return;
    const int parent = nodes_[static_cast<size_t>(node)].parent;
    if (parent >= 0) compute(parent);
    const float* h = zero_state_;
    const float* c = zero_state_;
    if (parent >= 0) {
        const Slot& p = slots_[static_cast<size_t>(nodes_[static_cast<size_t>(parent)].slot)];
        h = p.h;
        c = p.c;
    }
    const int s = new_slot(node);
    Slot& out = slots_[static_cast<size_t>(s)];
    // The start node steps on the blank: NeMo's zero start-of-sequence input with a zero state.
    pred_.step(team_, arena_, nodes_[static_cast<size_t>(node)].token, h, c, out.h, out.c);
    const float* g = out.h + (pred_.layers() - 1) * static_cast<int64_t>(pred_.hidden());
    joint_.project_prediction(team_, arena_, g, out.pred_proj);
    nodes_[static_cast<size_t>(node)].slot = s;
}

const float* PredictionCache::joint(int frame, int node) {
    compute(node);
    const Slot& s = slots_[static_cast<size_t>(nodes_[static_cast<size_t>(node)].slot)];
    joint_.logits(team_, arena_, enc_proj_ + static_cast<int64_t>(frame) * joint_.hidden(), s.pred_proj, logits_);
    return logits_;
}

void PredictionCache::retain(const std::vector<int>& live) {
    mark_.assign(nodes_.size(), 0);
    for (int n : live) {
        mark_[static_cast<size_t>(n)] = 1;
        const int parent = nodes_[static_cast<size_t>(n)].parent;
        if (parent >= 0) mark_[static_cast<size_t>(parent)] = 1;
    }
    for (size_t s = 0; s < slots_.size(); ++s) {
        const int owner = slots_[s].owner;
        if (owner < 0 || mark_[static_cast<size_t>(owner)]) continue;
        nodes_[static_cast<size_t>(owner)].slot = -1;
        slots_[s].owner = -1;
        free_slots_.push_back(static_cast<int>(s));
    }
}

}  // namespace pk
