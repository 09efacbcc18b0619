#include "model/decoder/context_graph.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>

#include "common/errors.h"

namespace pk {

std::shared_ptr<const ContextGraph> ContextGraph::build(const std::vector<ContextPhrase>& phrases, float score,
                                                        int vocab_size) {
    const auto start = std::chrono::steady_clock::now();
    if (phrases.empty()) throw InvalidArgument("phrases is NULL");
    if (!std::isfinite(score)) throw InvalidArgument("context graph: alpha must be finite");
    if (vocab_size <= 0) throw InvalidArgument("context graph: vocab_size must be positive");

    // The trie, with children by token while it grows.
    struct Node {
        std::map<int, std::pair<int, float>> next;  // token -> (state, bonus)
        int parent = kRoot;
        float arc_bonus = 0.f;
        bool end = false;
    };
    std::vector<Node> nodes(1);
    for (size_t i = 0; i < phrases.size(); ++i) {
        const ContextPhrase& p = phrases[i];
        const std::string which = "context phrase " + std::to_string(i) + ": ";
        if (p.ids.empty()) throw InvalidArgument(which + "is empty");
        if (!(p.weight > 0.f) || !std::isfinite(p.weight)) throw InvalidArgument(which + "weight must be positive");
        const float bonus = score * p.weight;
        int s = kRoot;
        for (int id : p.ids) {
            if (id < 0 || id > vocab_size) throw InvalidArgument(which + "has a token id outside the vocabulary");
            auto it = nodes[static_cast<size_t>(s)].next.find(id);
            if (it == nodes[static_cast<size_t>(s)].next.end()) {
                const int t = static_cast<int>(nodes.size());
                nodes[static_cast<size_t>(s)].next.emplace(id, std::make_pair(t, bonus));
                Node child;
                child.parent = s;
                child.arc_bonus = bonus;
                nodes.push_back(std::move(child));
                s = t;
            } else {
                // A shared arc earns the largest bonus of the phrases through it.
                it->second.second = std::max(it->second.second, bonus);
                nodes[static_cast<size_t>(it->second.first)].arc_bonus = it->second.second;
                s = it->second.first;
            }
        }
        nodes[static_cast<size_t>(s)].end = true;
    }

    auto g = std::make_shared<ContextGraph>();
    g->n_phrases_ = static_cast<int>(phrases.size());
    g->states_.resize(nodes.size());
    for (size_t s = 0; s < nodes.size(); ++s) {
        State& st = g->states_[s];
        st.end = nodes[s].end;
        st.first = static_cast<int>(g->arcs_.size());
        st.n = static_cast<int>(nodes[s].next.size());
        for (const auto& [token, target] : nodes[s].next) g->arcs_.push_back({token, target.first, target.second});
    }
    // Partial bonuses and failure links, breadth first (a state's parent and its failure
    // link's chain are done before it).
    std::vector<int> queue{kRoot};
    for (size_t q = 0; q < queue.size(); ++q) {
        const int s = queue[q];
        const State& st = g->states_[static_cast<size_t>(s)];
        for (const ContextArc* a = g->arcs_begin(s); a != g->arcs_end(s); ++a) {
            State& child = g->states_[static_cast<size_t>(a->target)];
            child.partial = child.end ? 0.f : st.partial + a->bonus;
            int f = st.fail;
            const ContextArc* via = nullptr;
            if (s != kRoot) {
                for (;;) {
                    via = g->find_arc(f, a->token);
                    if (via != nullptr || f == kRoot) break;
                    f = g->states_[static_cast<size_t>(f)].fail;
                }
            }
            child.fail = via != nullptr ? via->target : kRoot;
            if (child.fail != kRoot) ++g->n_arcs_;
            queue.push_back(a->target);
        }
    }
    g->n_arcs_ += static_cast<int>(g->arcs_.size());
    g->build_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return g;
}

const ContextArc* ContextGraph::find_arc(int state, int token) const {
    const ContextArc* b = arcs_begin(state);
    const ContextArc* e = arcs_end(state);
    const ContextArc* a = std::lower_bound(b, e, token, [](const ContextArc& x, int t) { return x.token < t; });
    return a != e && a->token == token ? a : nullptr;
}

ContextGraph::Step ContextGraph::transition(int state, int token) const {
    // From `state` or the longest suffix of its match that continues with `token`: the old
    // partial bonus is given back and the suffix's (a part of it) earned again, plus the arc.
    const float old_partial = states_[static_cast<size_t>(state)].partial;
    int from = state;
    const ContextArc* a = nullptr;
    for (;;) {
        a = find_arc(from, token);
        if (a != nullptr || from == kRoot) break;
        from = states_[static_cast<size_t>(from)].fail;
    }
    Step step;
    if (a != nullptr) {
        step.state = a->target;
        step.delta = states_[static_cast<size_t>(from)].partial + a->bonus - old_partial;
        step.completed = states_[static_cast<size_t>(a->target)].end;
    } else {
        step.state = kRoot;
        step.delta = -old_partial;
    }
    step.failed = from != state && step.delta < 0.f;
    return step;
}

}  // namespace pk
