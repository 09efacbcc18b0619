// TransducerDecoder: greedy TDT or RNN-T decoding of an encoder output — the prediction net,
// the joint and the search rules (greedy_tdt.h / greedy_rnnt.h) put together.
//
// Per-model state (weights, the embedding table) is built once at load and is read-only
// afterwards, so requests on different threads may decode against one decoder at once. All
// per-request state (encoder projections, LSTM states, logits) lives in the request's arena.
#pragma once

#include <cstdint>
#include <vector>

#include "model/decoder/beam_search.h"
#include "model/decoder/context_graph.h"
#include "model/decoder/joint.h"
#include "model/decoder/prediction_net.h"
#include "model/decoder/stream_carry.h"
#include "model/decoder/transducer_steps.h"
#include "model/request_progress.h"
#include "model/transcript/transcript.h"

namespace pk {

// One stream's chunk in TransducerDecoder::decode_chunks: enc [n_frames, d_model], continuing
// from *carry (updated); `tokens` receives the chunk's tokens (frames local to the chunk).
struct ChunkDecode {
    const float* enc;
    int64_t n_frames;
    TransducerCarry* carry;
    std::vector<TranscriptToken> tokens;
};

class TransducerDecoder {
public:
    // Reads the prediction net and the joint (cfg.has_transducer() must hold); `team` and
    // `arena` compute the prediction net's input table.
    static TransducerDecoder load(const TensorLoader& t, const ModelConfig& cfg, ThreadTeam& team, Arena& arena);

    // Greedy decoding of the first enc_len frames of enc [T, d_model] (row-major, time-major).
    // Throws InvalidArgument unless 0 <= enc_len <= T.
    std::vector<TranscriptToken> decode(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                        int64_t enc_len) const;
    // The same biased towards hotwords (context_bias.h; TDT only: throws InvalidArgument for an
    // RNN-T head); `stats` (may be null) receives what the graph did.
    std::vector<TranscriptToken> decode_biased(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                               int64_t enc_len, const ContextGraph& graph, int top_m,
                                               ContextStats* stats) const;

    // NeMo's beam strategy (beam_tdt.h / beam_rnnt.h, defined in transducer_beam.cpp) on the
    // first enc_len frames: every final hypothesis, best first. Throws InvalidArgument unless
    // 0 <= enc_len <= T and beam.beam_size >= 1.
    // `progress` is told how far the search is, frame by frame (it may throw Cancelled).
    std::vector<BeamHypothesis> decode_beam(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                            int64_t enc_len, const BeamOptions& beam,
                                            const ProgressSpan& progress = {}) const;

    // A chunked stream's step: greedy decoding of the n_frames frames of enc [n_frames, d_model]
    // continuing from `carry` (updated), with streaming_options(). Token frames are local to
    // the chunk; a TDT chunk starts at frame carry.skip_frames.
    std::vector<TranscriptToken> decode_chunk(ThreadTeam& team, Arena& arena, const float* enc, int64_t n_frames,
                                              TransducerCarry& carry) const;
    // decode_chunk for the chunks of several streams at once (a batch round of streams): each
    // chunk's tokens and carry come out bitwise as decode_chunk gives them alone. The searches
    // run in lockstep, and at each step the joints of all of them, and the prediction-net steps
    // of those that emitted a token, run as one product each (transducer_lane.h).
    void decode_chunks(ThreadTeam& team, Arena& arena, std::vector<ChunkDecode>& chunks) const;
    // decode() of several whole encoder outputs at once (the requests of an offline batch):
    // each one's n_frames frames from a fresh carry (TransducerCarry{}, left as a next chunk
    // would continue from it), with the model's search rules. Searched in lockstep as
    // decode_chunks does; each one's tokens come out bitwise as decode() gives them alone.
    void decode_batch(ThreadTeam& team, Arena& arena, std::vector<ChunkDecode>& utterances) const;
    // The search rules NeMo's streaming script decodes with: its RNNTDecodingConfig defaults,
    // label-looping greedy_batch (TdtLoop::GreedyBatch) with max_symbols 10, whatever the
    // model's own decoding config says.
    GreedyOptions streaming_options() const;
    static constexpr int kStreamingMaxSymbols = 10;

    bool is_tdt() const { return !options_.durations.empty(); }
    TimestampRule timestamp_rule() const { return is_tdt() ? TimestampRule::Tdt : TimestampRule::Rnnt; }
    const GreedyOptions& options() const { return options_; }
    // Which NeMo greedy TDT loop to follow; not thread-safe against running decodes.
    void set_tdt_loop(TdtLoop loop) { options_.tdt_loop = loop; }

    size_t packed_bytes() const { return prediction_.packed_bytes() + joint_.packed_bytes(); }

private:
    // decode_chunks and decode_batch: the searches of `chunks` in lockstep with the rules `o`.
    void decode_lockstep(ThreadTeam& team, Arena& arena, std::vector<ChunkDecode>& chunks,
                         const GreedyOptions& o) const;
    // decode() (graph null) and decode_biased().
    std::vector<TranscriptToken> decode_greedy(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                               int64_t enc_len, const ContextGraph* graph, int top_m,
                                               ContextStats* stats) const;

    PredictionNet prediction_;
    Joint joint_;
    GreedyOptions options_;
};

}  // namespace pk
