#include "model/offline/offline_batch.h"

#include <algorithm>
#include <utility>

namespace pk {
namespace {

// A request that got through its front end: its features and where its encoder rows are.
struct Encoded {
    OfflineRequest* request;
    bool ctc;
    int prompt;
    MelFeatures mel;
    AttentionSetting attention;
    size_t utterance;  // its index in the encoder pass
};

}  // namespace

void OfflineBatch::check(const OfflineRequest& r) const {
    model_.uses_ctc(r.options->decoder);
    model_.prompt_id(r.options->language);
    model_.resampled_length(r.samples, r.n, r.sample_rate);
}

void OfflineBatch::run(Backend& b, const std::vector<OfflineRequest*>& requests) const {
    Arena& arena = b.arena();
    arena.reset();
    const FastConformerEncoder& enc = model_.encoder();
    std::vector<Encoded> encoded;
    std::vector<EncoderUtterance> utterances;
    // The front end per request, in the arena; a request's own failure (its audio, its
    // options) is its own.
    for (OfflineRequest* r : requests) {
        try {
            const bool ctc = model_.uses_ctc(r->options->decoder);
            const int prompt = model_.prompt_id(r->options->language);
            int64_t got = 0;
            const float* audio = model_.prepare_audio(b, r->samples, r->n, r->sample_rate, &got);
            const MelFeatures mel = model_.compute_mel(b, audio, got);
            const AttentionSetting attention =
                model_.resolve_attention(r->options->attention, enc.output_frames(mel.valid));
            encoded.push_back({r, ctc, prompt, mel, attention, utterances.size()});
            utterances.push_back({mel.data, mel.valid, attention});
        } catch (...) {
            r->error = std::current_exception();
        }
    }
    try {
        int64_t rows = 0;
        for (const EncoderUtterance& u : utterances) rows += enc.output_frames(u.mel_frames);
        float* out = arena.alloc_array<float>(static_cast<size_t>(std::max<int64_t>(1, rows) * enc.d_model()));
        enc.forward_batch(b.team(), arena, utterances, out);
        // The transducer requests decode batched, the CTC ones one by one.
        std::vector<ChunkDecode> searches;
        std::vector<TransducerCarry> carries(encoded.size());
        std::vector<std::vector<TranscriptToken>> tokens(encoded.size());
        std::vector<size_t> searched;
        for (size_t i = 0; i < encoded.size(); ++i) {
            const Encoded& e = encoded[i];
            const EncoderUtterance& u = utterances[e.utterance];
            if (u.frames == 0) continue;  // nothing to decode, as alone
            float* rows_i = out + u.row * enc.d_model();
            model_.apply_prompt(b, rows_i, u.frames, e.prompt);
            if (e.ctc) {
                tokens[i] = model_.ctc()->decode(b.team(), arena, rows_i, u.frames, u.frames);
            } else {
                searches.push_back({rows_i, u.frames, &carries[i], {}});
                searched.push_back(i);
            }
        }
        if (!searches.empty()) model_.transducer()->decode_batch(b.team(), arena, searches);
        for (size_t j = 0; j < searched.size(); ++j) tokens[searched[j]] = std::move(searches[j].tokens);
        for (size_t i = 0; i < encoded.size(); ++i) {
            const Encoded& e = encoded[i];
            const TimestampRule rule = e.ctc ? TimestampRule::Ctc : model_.transducer()->timestamp_rule();
            e.request->transcript = model_.transcript_builder().build(std::move(tokens[i]), rule);
            e.request->transcript.attention = e.attention;
        }
    } catch (...) {
        for (const Encoded& e : encoded) e.request->error = std::current_exception();
    }
    arena.release_if_above(kArenaKeepBytes);
}

void OfflineBatch::run_leased(const std::vector<OfflineRequest*>& requests) const {
    try {
        const BackendLease lease = model_.lease_backend();
        run(lease.backend(), requests);
    } catch (...) {  // no backend
        for (OfflineRequest* r : requests) r->error = std::current_exception();
    }
}

}  // namespace pk
