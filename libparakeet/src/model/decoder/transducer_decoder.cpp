#include "model/decoder/transducer_decoder.h"

#include <cstring>
#include <string>
#include <utility>

#include "common/errors.h"
#include "model/decoder/argmax.h"
#include "model/decoder/context_bias.h"
#include "model/decoder/greedy_cursor.h"
#include "model/decoder/greedy_rnnt.h"
#include "model/decoder/greedy_tdt.h"
#include "model/decoder/transducer_lane.h"

namespace pk {
namespace {

// One request's view of the networks, all buffers in the request's arena: one lane
// (transducer_lane.h) for a search that drives it frame by frame.
class ArenaSteps final : public TransducerSteps {
public:
    ArenaSteps(ThreadTeam& team, Arena& arena, const PredictionNet& pred, const Joint& joint,
               const float* enc_proj, int blank_id)
        : team_(team), arena_(arena), pred_(pred), joint_(joint),
          lane_(arena, pred, joint, enc_proj, blank_id, nullptr),
          logits_(arena.alloc_array<float>(static_cast<size_t>(joint.outputs()))) {}

    const float* joint(int frame) override {
        TransducerLane* lane = &lane_;
        if (lane_.pending >= 0) run_predictions(team_, arena_, pred_, joint_, &lane, 1);
        run_joints(team_, arena_, joint_, &lane, &frame, 1, logits_);
        return logits_;
    }

    void emit(int token) override { lane_.emit(token); }

private:
    ThreadTeam& team_;
    Arena& arena_;
    const PredictionNet& pred_;
    const Joint& joint_;
    TransducerLane lane_;
    float* logits_;
};

// A chunk of a batched decode that has frames to decode.
struct LiveChunk {
    ChunkDecode* chunk;
    TransducerLane lane;
    GreedyCursor cursor;
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
    std::vector<ChunkDecode> one{{enc, n_frames, &carry, {}}};
    decode_chunks(team, arena, one);
    return std::move(one[0].tokens);
}

void TransducerDecoder::decode_chunks(ThreadTeam& team, Arena& arena, std::vector<ChunkDecode>& chunks) const {
    decode_lockstep(team, arena, chunks, streaming_options());
}

void TransducerDecoder::decode_batch(ThreadTeam& team, Arena& arena, std::vector<ChunkDecode>& utterances) const {
    decode_lockstep(team, arena, utterances, options_);
}

void TransducerDecoder::decode_lockstep(ThreadTeam& team, Arena& arena, std::vector<ChunkDecode>& chunks,
                                        const GreedyOptions& o) const {
    ArenaScope scope(arena);
    std::vector<ChunkDecode*> todo;
    std::vector<const float*> enc;
    std::vector<int64_t> frames_of;
    std::vector<float*> enc_proj;
    for (ChunkDecode& ch : chunks) {
        TransducerCarry& carry = *ch.carry;
        if (is_tdt() && carry.skip_frames >= ch.n_frames) {  // NeMo starts past the chunk: nothing to decode
            carry.skip_frames -= static_cast<int>(ch.n_frames);
            continue;
        }
        if (ch.n_frames <= 0) continue;
        todo.push_back(&ch);
        enc.push_back(ch.enc);
        frames_of.push_back(ch.n_frames);
        enc_proj.push_back(arena.alloc_array<float>(static_cast<size_t>(ch.n_frames * joint_.hidden())));
    }
    joint_.project_encoders(team, arena, enc, frames_of, enc_proj);
    std::vector<LiveChunk> live;
    live.reserve(todo.size());
    for (size_t i = 0; i < todo.size(); ++i) {
        const TransducerCarry& carry = *todo[i]->carry;
        live.push_back({todo[i], TransducerLane(arena, prediction_, joint_, enc_proj[i], options_.blank_id, &carry),
                        GreedyCursor(o, static_cast<int>(todo[i]->n_frames), is_tdt() ? carry.skip_frames : 0)});
    }

    // Lockstep: at each step, every search that is not done evaluates one joint; those whose
    // last step emitted a token first advance the prediction net on it.
    float* logits = arena.alloc_array<float>(live.size() * static_cast<size_t>(joint_.outputs()));
    std::vector<LiveChunk*> stepping;
    std::vector<TransducerLane*> lanes, pending;
    std::vector<int> frames;
    for (;;) {
        stepping.clear();
        lanes.clear();
        pending.clear();
        frames.clear();
        for (LiveChunk& l : live) {
            if (l.cursor.done()) continue;
            stepping.push_back(&l);
            lanes.push_back(&l.lane);
            frames.push_back(l.cursor.frame());
            if (l.lane.pending >= 0) pending.push_back(&l.lane);
        }
        if (stepping.empty()) break;
        run_predictions(team, arena, prediction_, joint_, pending.data(), static_cast<int64_t>(pending.size()));
        run_joints(team, arena, joint_, lanes.data(), frames.data(), static_cast<int64_t>(lanes.size()), logits);
        for (size_t i = 0; i < stepping.size(); ++i) {
            const float* row = logits + i * static_cast<size_t>(joint_.outputs());
            const int token = argmax(row, o.blank_id + 1);
            if (stepping[i]->cursor.advance(row, token, stepping[i]->chunk->tokens)) stepping[i]->lane.emit(token);
        }
    }
    for (const LiveChunk& l : live) {
        TransducerCarry& carry = *l.chunk->carry;
        if (is_tdt()) carry.skip_frames = l.cursor.end_frame() - static_cast<int>(l.chunk->n_frames);
        l.lane.save(carry, prediction_.state_size());
    }
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
