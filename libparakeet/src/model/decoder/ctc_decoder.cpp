#include "model/decoder/ctc_decoder.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/errors.h"
#include "model/decoder/context_bias.h"
#include "model/decoder/greedy_ctc.h"

namespace pk {

CtcDecoder CtcDecoder::load(const TensorLoader& t, const ModelConfig& cfg) {
    if (!cfg.has_ctc()) t.fail(std::string("a ") + arch_name(cfg.arch) + " model has no CTC head");
    const std::string prefix = cfg.arch == Arch::Ctc ? "decoder.decoder_layers.0" : "ctc_decoder.decoder_layers.0";
    CtcDecoder d;
    d.head_ = Linear::load(t, prefix, cfg.vocab_size + 1, cfg.enc.d_model, true);
    return d;
}

std::vector<TranscriptToken> CtcDecoder::decode(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                                int64_t enc_len) const {
    return decode_greedy(team, arena, enc, T, enc_len, nullptr, 0, nullptr);
}

std::vector<TranscriptToken> CtcDecoder::decode_biased(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                                       int64_t enc_len, const ContextGraph& graph, int top_m,
                                                       ContextStats* stats) const {
    if (stats != nullptr) *stats = ContextStats{};
    return decode_greedy(team, arena, enc, T, enc_len, &graph, top_m, stats);
}

std::vector<TranscriptToken> CtcDecoder::decode_greedy(ThreadTeam& team, Arena& arena, const float* enc, int64_t T,
                                                       int64_t enc_len, const ContextGraph* graph, int top_m,
                                                       ContextStats* stats) const {
    if (enc_len < 0 || enc_len > T)
        throw InvalidArgument("encoder length " + std::to_string(enc_len) + " is outside [0, " + std::to_string(T) + "]");
    if (enc_len == 0) return {};
    ArenaScope scope(arena);
    float* out = arena.alloc_array<float>(static_cast<size_t>(enc_len * classes()));
    logits(team, arena, enc, enc_len, out);
    const int n = static_cast<int>(enc_len);
    if (graph != nullptr) return greedy_ctc_biased(out, n, classes(), confidence_, *graph, top_m, stats);
    return greedy_ctc(out, n, classes(), confidence_);
}

void CtcDecoder::log_probs(ThreadTeam& team, Arena& arena, const float* enc, int64_t enc_len, float* out) const {
    logits(team, arena, enc, enc_len, out);
    const int n = classes();
    for (int64_t t = 0; t < enc_len; ++t) {
        float* row = out + t * n;
        const float max = *std::max_element(row, row + n);
        double sum = 0.0;
        for (int i = 0; i < n; ++i) sum += std::exp(static_cast<double>(row[i] - max));
        const float log_sum = static_cast<float>(std::log(sum));
        for (int i = 0; i < n; ++i) row[i] = row[i] - max - log_sum;
    }
}

void CtcDecoder::decode_chunk(ThreadTeam& team, Arena& arena, const float* enc, int64_t n_frames, int first_frame,
                              CtcCarry& carry, std::vector<TranscriptToken>& tokens) const {
    if (n_frames <= 0) return;
    ArenaScope scope(arena);
    float* out = arena.alloc_array<float>(static_cast<size_t>(n_frames * classes()));
    logits(team, arena, enc, n_frames, out);
    greedy_ctc_append(out, static_cast<int>(n_frames), classes(), confidence_, first_frame, carry.previous_label,
                      tokens);
}

}  // namespace pk
