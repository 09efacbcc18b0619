// Speaker-attributed ASR through the C ABI (parakeet.cpp's ABI 7 transcribe_and_diarize,
// _json and free_sas_results, and our _json_with_progress): the ASR context's words, the
// diarization context's segments with its default settings, and model/sas/speaker_words.h's
// rule between them.
//
// Errors go where parakeet.cpp sends them: bad input (buffers, contexts, the sample rate) to the
// ASR context, a failure while transcribing to the ASR context, while diarizing to the
// diarization context (a cancel too: the stage the callback stopped). A success clears both.
//
// Progress over the two stages: the transcription's fraction f reports f / 2, the
// diarization's 0.5 + f / 2 (each stage is one pass over the same audio).
//
// The named form (ABI 9's transcribe_and_diarize_named_json) adds each speaker slot's name from
// a voice registry (model/speaker/slot_names.h): "names" at the top and "name" / "name_score" on
// every utterance and word; its speaker part's errors go to the speaker context.
#include <string>
#include <vector>

#include "capi/context.h"
#include "capi/diar_default_segments.h"
#include "capi/progress_callback.h"
#include "capi/sas_results.h"
#include "capi/named_slots.h"
#include "capi/transcript_json.h"
#include "common/json_writer.h"
#include "model/sas/speaker_words.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

struct SasRun {
    int n_speakers = 0;
    pk::Transcript transcript;
    double seconds = 0.0;  // of input audio
    std::vector<pk::DiarSegment> segments;
    std::vector<int> speakers;  // one per transcript word
    const std::map<int, pk::speaker::SlotVoice>* names = nullptr;  // the named form only
};

// The caller's progress for one half of the request: a stage's fraction f as begin + f / 2.
pk::ProgressFn half_of(const pk::ProgressFn& fn, double begin) {
    if (!fn) return {};
    return [fn, begin](double f) { return fn(begin + 0.5 * f); };
}

// 0 and the result, or 1 with the error recorded on the context that failed.
int run_sas(parakeet_ctx* asr, parakeet_ctx* diar, const float* samples, int n_samples, int sample_rate,
            SasRun& run, const pk::ProgressFn& progress = {}) {
    const bool heard = guarded<bool>(asr, false, [&] {
        pk::Model& model = pk::capi::asr_model(asr);
        if (diar == nullptr) throw pk::InvalidArgument("diarization context is NULL");
        if (diar->kind != pk::ModelKind::Diarization)
            throw pk::Unsupported("the second context holds no diarization model");
        if (n_samples < 0 || (n_samples > 0 && samples == nullptr))
            throw pk::InvalidArgument("invalid samples buffer");
        pk::RequestOptions options;
        options.progress = half_of(progress, 0.0);
        run.transcript = model.transcribe(samples, n_samples, sample_rate, options);
        run.seconds = sample_rate > 0 ? static_cast<double>(n_samples) / sample_rate : 0.0;
        return true;
    });
    if (!heard) return 1;
    const bool diarized = guarded<bool>(diar, false, [&] {
        const pk::DiarModel& m = pk::capi::diar_model(diar);
        pk::RequestProgress diarizing(half_of(progress, 0.5));
        run.segments = pk::capi::default_segments(m, samples, n_samples, sample_rate, {&diarizing, 0.0, 1.0});
        run.n_speakers = m.config().n_speakers;
        return true;
    });
    if (!diarized) return 1;
    run.speakers = pk::word_speakers(run.transcript.words, run.segments);
    return 0;
}

// A slot's name and score in the named form ("" and 0 for a word of no speaker).
void write_name(pk::JsonWriter& j, const std::map<int, pk::speaker::SlotVoice>& names, int speaker) {
    const auto it = names.find(speaker);
    const pk::speaker::SpeakerMatch none;
    const pk::speaker::SpeakerMatch& m = it != names.end() ? it->second.match : none;
    j.key("name").value(m.name).key("name_score").value(static_cast<double>(m.score), 4);
}

void write_item(pk::JsonWriter& j, const pk::SasItem& u, int decimals,
                const std::map<int, pk::speaker::SlotVoice>* names) {
    j.begin_object();
    j.key("speaker").value(u.speaker);
    if (names != nullptr) write_name(j, *names, u.speaker);
    j.key("text").value(u.text);
    j.key("start").value(u.start, decimals);
    j.key("end").value(u.end, decimals);
    j.key("conf").value(static_cast<double>(u.confidence), 4);
    j.end_object();
}

// parakeet.cpp's document (utterance times with 2 decimals, word times with 3), then ours:
// the diarization segments and the whole transcript document, which the bindings build their
// transcripts from.
std::string sas_json(const SasRun& run) {
    const std::vector<pk::TranscriptWord>& words = run.transcript.words;
    pk::JsonWriter j;
    j.begin_object();
    j.key("speakers").value(run.n_speakers);
    if (run.names != nullptr) {
        j.key("names").begin_object();
        for (const auto& [slot, v] : *run.names) {
            j.key(std::to_string(slot).c_str()).begin_object();
            j.key("name").value(v.match.name).key("score").value(static_cast<double>(v.match.score), 4).end_object();
        }
        j.end_object();
    }
    j.key("utterances").begin_array();
    for (const pk::SasItem& u : pk::speaker_utterances(words, run.speakers)) write_item(j, u, 2, run.names);
    j.end_array();
    j.key("words").begin_array();
    for (size_t i = 0; i < words.size(); ++i) {
        const pk::TranscriptWord& w = words[i];
        write_item(j, pk::SasItem{run.speakers[i], w.text, w.start_sec, w.end_sec, w.confidence}, 3, run.names);
    }
    j.end_array();
    j.key("segments").begin_array();
    for (const pk::DiarSegment& s : run.segments) {
        j.begin_object();
        j.key("speaker").value(s.speaker);
        j.key("start").value(s.start, 2);
        j.key("end").value(s.end, 2);
        j.end_object();
    }
    j.end_array();
    j.key("transcript").document(pk::capi::transcript_to_json(run.transcript, run.seconds));
    j.end_object();
    return j.str();
}

}  // namespace

extern "C" {

int parakeet_capi_transcribe_and_diarize(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx, const float* samples,
                                         int n_samples, int sample_rate, parakeet_sas_result** out, int* n_out) {
    if (out != nullptr) *out = nullptr;
    if (n_out != nullptr) *n_out = 0;
    if (out == nullptr || n_out == nullptr) {
        return guarded<int>(asr_ctx, 1, []() -> int { throw pk::InvalidArgument("out or n_out is NULL"); });
    }
    SasRun run;
    if (run_sas(asr_ctx, diar_ctx, samples, n_samples, sample_rate, run) != 0) return 1;
    return guarded<int>(asr_ctx, 1, [&] {
        const std::vector<pk::SasItem> items = pk::speaker_utterances(run.transcript.words, run.speakers);
        *out = pk::capi::to_c_results(items);
        *n_out = static_cast<int>(items.size());
        return 0;
    });
}

char* parakeet_capi_transcribe_and_diarize_json(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx, const float* samples,
                                                int n_samples, int sample_rate) {
    return parakeet_capi_transcribe_and_diarize_json_with_progress(asr_ctx, diar_ctx, samples, n_samples, sample_rate,
                                                                   nullptr, nullptr);
}

char* parakeet_capi_transcribe_and_diarize_json_with_progress(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx,
                                                              const float* samples, int n_samples, int sample_rate,
                                                              parakeet_progress_fn fn, void* user_data) {
    SasRun run;
    if (run_sas(asr_ctx, diar_ctx, samples, n_samples, sample_rate, run, pk::capi::progress_from(fn, user_data)) != 0)
        return nullptr;
    return guarded<char*>(asr_ctx, nullptr, [&] { return pk::capi::to_c_string(sas_json(run)); });
}

char* parakeet_capi_transcribe_and_diarize_named_json(parakeet_ctx* asr, parakeet_ctx* diar, parakeet_ctx* speaker,
                                                      parakeet_speaker_registry* registry, const float* samples,
                                                      int n_samples, int sample_rate) {
    if (speaker == nullptr) return nullptr;
    pk::capi::clear_error(speaker);
    SasRun run;
    if (run_sas(asr, diar, samples, n_samples, sample_rate, run) != 0) return nullptr;
    return guarded<char*>(speaker, nullptr, [&] {
        const auto names =
            pk::capi::named_slots(registry, speaker, run.segments, samples, n_samples, sample_rate, 0, 0, false);
        run.names = &names;
        return pk::capi::to_c_string(sas_json(run));
    });
}

}  // extern "C"
