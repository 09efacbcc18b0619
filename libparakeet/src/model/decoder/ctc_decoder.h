// CtcDecoder: the CTC head (a 1x1 Conv1d d_model -> V+1, i.e. one GEMM over the frames) and
// greedy CTC decoding (greedy_ctc.h). The head is `ctc_decoder.decoder_layers.0` in hybrid
// models and `decoder.decoder_layers.0` in pure CTC models. Read-only after load.
#pragma once

#include <cstdint>
#include <vector>

#include "model/decoder/confidence.h"
#include "model/decoder/context_graph.h"
#include "model/decoder/stream_carry.h"
#include "model/layers/linear.h"
#include "model/model_config.h"
#include "model/transcript.h"

namespace pk {

class CtcDecoder {
public:
    // cfg.has_ctc() must hold.
    static CtcDecoder load(const TensorLoader& t, const ModelConfig& cfg);

    // Logits [enc_len, V+1] of the first enc_len frames of enc [T, d_model].
    void logits(ThreadTeam& team, Arena& arena, const float* enc, int64_t enc_len, float* out) const {
        head_.forward(team, arena, enc, enc_len, out);
    }

    // Log-softmax of the logits of the first enc_len frames of enc: [enc_len, V+1], blank last.
    void log_probs(ThreadTeam& team, Arena& arena, const float* enc, int64_t enc_len, float* out) const;

    // Greedy decoding of the first enc_len frames of enc [T, d_model]. Throws InvalidArgument
    // unless 0 <= enc_len <= T.
    std::vector<TranscriptToken> decode(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                        int64_t enc_len) const;
    // The same biased towards hotwords (context_bias.h); `stats` (may be null) receives what
    // the graph did.
    std::vector<TranscriptToken> decode_biased(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                               int64_t enc_len, const ContextGraph& graph, int top_m,
                                               ContextStats* stats) const;

    // A chunked stream's step: greedy decoding of the n_frames frames of enc [n_frames, d_model]
    // continuing from `carry` (updated), appending to `tokens` with frames numbered from
    // first_frame (greedy_ctc_append).
    void decode_chunk(ThreadTeam& team, Arena& arena, const float* enc, int64_t n_frames, int first_frame,
                      CtcCarry& carry, std::vector<TranscriptToken>& tokens) const;

    int classes() const { return static_cast<int>(head_.out()); }
    // Confidence settings (NeMo max_prob alpha); not thread-safe against running decodes.
    void set_confidence(const ConfidenceOptions& c) { confidence_ = c; }

    size_t packed_bytes() const { return head_.packed_bytes(); }

private:
    // decode() (graph null) and decode_biased().
    std::vector<TranscriptToken> decode_greedy(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                               int64_t enc_len, const ContextGraph* graph, int top_m,
                                               ContextStats* stats) const;

    Linear head_;
    ConfidenceOptions confidence_;
};

}  // namespace pk
