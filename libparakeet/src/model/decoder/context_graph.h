// ContextGraph: the phrase graph of hotword (context) biasing, with the semantics of
// parakeet.cpp's ContextBoostingGraph as its C API exposes them (established black-box against
// the parakeet-cpp-cuda 0.2.2 library: docs/api.md, "Hotwords").
//
// A token trie of the phrases (shared prefixes share states) with Aho-Corasick failure links:
//   - every arc earns bonus = score x weight (the largest weight among the phrases through it);
//   - a state's partial bonus is what its path earned since the last completed phrase on it;
//     reaching a phrase's end completes it (the bonus is kept for good);
//   - a token with no arc from the state follows the failure links (the longest suffix of the
//     match that is a prefix of some phrase) to a state that has one, or to the root: the
//     match restarts, giving back the old partial bonus and re-earning the suffix's;
//   - finalize() gives back the partial bonus of an unfinished match at the end of the audio.
// Immutable once built: share it (shared_ptr<const ContextGraph>) between threads and requests.
#pragma once

#include <memory>
#include <vector>

namespace pk {

struct ContextPhrase {
    std::vector<int> ids;
    float weight = 1.f;
};

struct ContextArc {
    int token = 0;
    int target = 0;
    float bonus = 0.f;
};

// What a decode did with the graph: the JSON "context" object.
struct ContextStats {
    long transitions = 0;        // tokens emitted (each moves the graph)
    long candidate_checks = 0;   // candidates scored
    long completed_phrases = 0;  // phrase ends reached
    long failed_prefixes = 0;    // partial matches broken off (a bonus given back)
    double final_rollback = 0;   // finalize() of the last state (<= 0)
};

class ContextGraph {
public:
    static constexpr int kRoot = 0;

    struct Step {
        int state = kRoot;
        float delta = 0.f;
        bool completed = false;  // the new state ends a phrase
        bool failed = false;     // a partial match was broken off, with a bonus given back
    };

    // Throws InvalidArgument (with parakeet.cpp's messages) for no phrases, an empty phrase, an
    // id outside [0, vocab_size] (the blank, == vocab_size, is accepted as theirs is), a
    // non-positive or non-finite weight, or a non-finite score.
    static std::shared_ptr<const ContextGraph> build(const std::vector<ContextPhrase>& phrases, float score,
                                                     int vocab_size);

    Step transition(int state, int token) const;
    float finalize(int state) const { return -states_[static_cast<size_t>(state)].partial; }

    // The arcs leaving `state`, ordered by token.
    const ContextArc* arcs_begin(int state) const { return arcs_.data() + states_[static_cast<size_t>(state)].first; }
    const ContextArc* arcs_end(int state) const { return arcs_begin(state) + states_[static_cast<size_t>(state)].n; }

    int n_states() const { return static_cast<int>(states_.size()); }
    // Trie arcs plus failure links to a state other than the root (parakeet.cpp counts both).
    int n_arcs() const { return n_arcs_; }
    int n_phrases() const { return n_phrases_; }
    double build_ms() const { return build_ms_; }

private:
    struct State {
        int first = 0, n = 0;  // arcs_[first, first + n)
        int fail = kRoot;
        float partial = 0.f;   // bonus earned since the last phrase end on the path
        bool end = false;
    };
    const ContextArc* find_arc(int state, int token) const;

    std::vector<State> states_;
    std::vector<ContextArc> arcs_;
    int n_phrases_ = 0;
    int n_arcs_ = 0;
    double build_ms_ = 0;
};

}  // namespace pk
