#include "model/decoder/transducer_decoder.h"

#include <cstring>
#include <string>

#include "common/errors.h"
#include "model/decoder/context_bias.h"
#include "model/decoder/greedy_rnnt.h"
#include "model/decoder/greedy_tdt.h"

namespace pk {
namespace {

// One request's view of the networks, all buffers in the request's arena. The prediction
// net runs lazily, when a joint needs its output: NeMo also runs it at the next step, and the
// token emitted last then costs nothing.
class ArenaSteps final : public TransducerSteps {
public:
    // `carry` (may be null: the stream start) gives the state and the token to continue from.
    ArenaSteps(ThreadTeam& team, Arena& arena, const PredictionNet& pred, const Joint& joint,
               const float* enc_proj, int blank_id, const TransducerCarry* carry = nullptr)
        : team_(team), arena_(arena), pred_(pred), joint_(joint), enc_proj_(enc_proj), pending_(blank_id),
          last_(-1) {
        const size_t state = static_cast<size_t>(pred.state_size());
        h_ = arena.alloc_array<float>(state);
        c_ = arena.alloc_array<float>(state);
        h_next_ = arena.alloc_array<float>(state);
        c_next_ = arena.alloc_array<float>(state);
        pred_proj_ = arena.alloc_array<float>(static_cast<size_t>(joint.hidden()));
        logits_ = arena.alloc_array<float>(static_cast<size_t>(joint.outputs()));
        std::memset(h_, 0, state * sizeof(float));
        std::memset(c_, 0, state * sizeof(float));
        if (carry != nullptr && carry->last_token >= 0) {
            std::memcpy(h_, carry->h.data(), state * sizeof(float));
            std::memcpy(c_, carry->c.data(), state * sizeof(float));
            pending_ = last_ = carry->last_token;
        }
    }

    // The state a next chunk continues from: (h, c) is the input state of the last emitted
    // token's step, which that chunk runs again (the same arithmetic, the same output).
    void save(TransducerCarry& carry) const {
        if (last_ < 0) return;
        const size_t state = static_cast<size_t>(pred_.state_size());
        carry.h.assign(h_, h_ + state);
        carry.c.assign(c_, c_ + state);
        carry.last_token = last_;
    }

    const float* joint(int frame) override {
        if (pending_ >= 0) {
            // (h, c) is the state after the last emitted token (zero at the start); the step
            // on `pending_` gives the output for the joint and the candidate next state.
            pred_.step(team_, arena_, pending_, h_, c_, h_next_, c_next_);
            const float* g = h_next_ + (pred_.layers() - 1) * static_cast<int64_t>(pred_.hidden());
            joint_.project_prediction(team_, arena_, g, pred_proj_);
            pending_ = -1;
        }
        joint_.logits(team_, arena_, enc_proj_ + static_cast<int64_t>(frame) * joint_.hidden(), pred_proj_, logits_);
        return logits_;
    }

    void emit(int token) override {
        // The emitted token keeps the state its step produced; the next step runs on it.
        std::swap(h_, h_next_);
        std::swap(c_, c_next_);
        pending_ = last_ = token;
    }

private:
    ThreadTeam& team_;
    Arena& arena_;
    const PredictionNet& pred_;
    const Joint& joint_;
    const float* enc_proj_;
    int pending_;  // token the prediction net has yet to run on, or -1
    int last_;     // the last emitted token (the carried one at a chunk's start), or -1
    float* h_;
    float* c_;
    float* h_next_;
    float* c_next_;
    float* pred_proj_;
    float* logits_;
};

}  // namespace

GreedyOptions TransducerDecoder::streaming_options() const {
    GreedyOptions o = options_;
    o.tdt_loop = TdtLoop::GreedyBatch;
    o.max_symbols = kStreamingMaxSymbols;
    return o;
}

std::vector<TranscriptToken> TransducerDecoder::decode_chunk(ThreadTeam& team, Arena& arena, const float* enc,
                                                             int64_t n_frames, TransducerCarry& carry) const {
    const int n = static_cast<int>(n_frames);
    if (is_tdt() && carry.skip_frames >= n) {  // NeMo starts past the chunk: nothing to decode
        carry.skip_frames -= n;
        return {};
    }
    if (n <= 0) return {};
    ArenaScope scope(arena);
    float* enc_proj = arena.alloc_array<float>(static_cast<size_t>(n_frames * joint_.hidden()));
    joint_.project_encoder(team, arena, enc, n_frames, enc_proj);
    ArenaSteps steps(team, arena, prediction_, joint_, enc_proj, options_.blank_id, &carry);
    const GreedyOptions o = streaming_options();
    std::vector<TranscriptToken> tokens;
    if (is_tdt()) {
        int end = n;
        tokens = greedy_tdt(steps, n, o, carry.skip_frames, &end);
        carry.skip_frames = end - n;
    } else {
        tokens = greedy_rnnt(steps, n, o);
    }
    steps.save(carry);
    return tokens;
}

TransducerDecoder TransducerDecoder::load(const TensorLoader& t, const ModelConfig& cfg, ThreadTeam& team,
                                          Arena& arena) {
    if (!cfg.has_transducer()) t.fail(std::string("a ") + arch_name(cfg.arch) + " model has no transducer decoder");
    TransducerDecoder d;
    d.prediction_ = PredictionNet::load(t, cfg, team, arena);
    d.joint_ = Joint::load(t, cfg);
    d.options_.blank_id = cfg.blank_id;
    d.options_.durations = cfg.is_tdt() ? cfg.durations : std::vector<int>{};
    d.options_.max_symbols = cfg.max_symbols;
    return d;
}

std::vector<TranscriptToken> TransducerDecoder::decode(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                                       int64_t enc_len) const {
    return decode_greedy(team, arena, enc, T, enc_len, nullptr, 0, nullptr);
}

std::vector<TranscriptToken> TransducerDecoder::decode_biased(ThreadTeam& team, Arena& arena, const float* enc,
                                                              int64_t T, int64_t enc_len, const ContextGraph& graph,
                                                              int top_m, ContextStats* stats) const {
    if (!is_tdt()) throw Unsupported("hotword biasing needs a TDT or CTC head, not RNN-T");
    if (stats != nullptr) *stats = ContextStats{};
    return decode_greedy(team, arena, enc, T, enc_len, &graph, top_m, stats);
}

std::vector<TranscriptToken> TransducerDecoder::decode_greedy(ThreadTeam& team, Arena& arena, const float* enc,
                                                              int64_t T, int64_t enc_len, const ContextGraph* graph,
                                                              int top_m, ContextStats* stats) const {
    if (enc_len < 0 || enc_len > T)
        throw InvalidArgument("encoder length " + std::to_string(enc_len) + " is outside [0, " + std::to_string(T) + "]");
    if (enc_len == 0) return {};
    ArenaScope scope(arena);
    float* enc_proj = arena.alloc_array<float>(static_cast<size_t>(enc_len * joint_.hidden()));
    joint_.project_encoder(team, arena, enc, enc_len, enc_proj);
    ArenaSteps steps(team, arena, prediction_, joint_, enc_proj, options_.blank_id);
    const int n = static_cast<int>(enc_len);
    if (graph != nullptr) return greedy_tdt_biased(steps, n, options_, *graph, top_m, stats);
    return is_tdt() ? greedy_tdt(steps, n, options_) : greedy_rnnt(steps, n, options_);
}

}  // namespace pk
