// VAD-cut transcription through the C ABI (parakeet.cpp's _vad_with shape): an ASR context,
// a Silero VAD context, the audio and the VAD's options (model/vad/vad_cut.h).
#include <string>
#include <utility>

#include "audio/wav_reader.h"
#include "capi/attention_json.h"
#include "capi/context.h"
#include "capi/decoder_number.h"
#include "capi/progress_callback.h"
#include "capi/transcript_json.h"
#include "capi/vad_options_json.h"
#include "common/errors.h"
#include "common/json_writer.h"
#include "model/vad/vad_cut.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

// The transcript document (transcript_json.h's keys; a token's "t" is its time on the
// recording's timeline, no longer a multiple of frame_sec) plus "segments", the speech
// that was transcribed. "attention" is the last chunk's (full when nothing was transcribed).
std::string cut_json(const pk::VadCutTranscript& t) {
    pk::JsonWriter j;
    j.begin_object();
    j.key("text").value(t.text);
    j.key("frame_sec").value(t.frame_sec, 4);
    j.key("duration").value(t.duration, 3);
    j.key("words");
    pk::capi::write_words(j, t.words);
    j.key("tokens").begin_array();
    for (size_t i = 0; i < t.tokens.size(); ++i) {
        j.begin_object();
        j.key("id").value(t.tokens[i].id);
        j.key("t").value(t.token_times[i], 3);
        j.key("conf").value(static_cast<double>(t.tokens[i].confidence), 4);
        j.key("dur").value(t.tokens[i].duration);
        j.end_object();
    }
    j.end_array();
    j.key("attention");
    pk::capi::write_attention(j, t.attention.empty() ? pk::AttentionSetting::full() : t.attention.back());
    j.key("segments").begin_array();
    for (const pk::VadSegment& s : t.segments) {
        j.begin_object();
        j.key("start").value(s.start, 6);
        j.key("end").value(s.end, 6);
        j.end_object();
    }
    j.end_array();
    j.end_object();
    return j.str();
}

const pk::SileroVad& silero_of(parakeet_ctx* vad) {
    if (vad == nullptr)
        throw pk::InvalidArgument("vad_ctx is NULL: give a context holding a Silero VAD model (this library's ASR "
                                  "models have no VAD head)");
    if (vad->kind != pk::ModelKind::Vad) throw pk::InvalidArgument("vad_ctx does not hold a Silero VAD model");
    return pk::capi::vad_model(vad);
}

char* cut(parakeet_ctx* asr, parakeet_ctx* vad, const float* samples, int64_t n, int rate, int decoder,
          const char* options_json, pk::ProgressFn progress = {}) {
    pk::Model& model = pk::capi::asr_model(asr);
    const pk::SileroVad& silero = silero_of(vad);
    std::string language;  // a prompt model's locale for every piece; empty: its default
    const pk::VadOptions options = pk::capi::parse_vad_options(options_json, &language);
    pk::RequestOptions request(pk::capi::decoder_from_int(decoder));
    request.language = language;
    request.progress = std::move(progress);
    model.prompt_id(language);  // an unknown locale is an error even when no speech is found
    return pk::capi::to_c_string(cut_json(pk::transcribe_vad_cut(model, silero, samples, n, rate, options, request)));
}

}  // namespace

extern "C" {

char* parakeet_capi_transcribe_pcm_json_vad_with(parakeet_ctx* asr_ctx, parakeet_ctx* vad_ctx, const float* samples,
                                                 int n_samples, int sample_rate, int decoder,
                                                 const char* options_json) {
    return guarded<char*>(asr_ctx, nullptr,
                          [&] { return cut(asr_ctx, vad_ctx, samples, n_samples, sample_rate, decoder, options_json); });
}

char* parakeet_capi_transcribe_pcm_json_vad_with_progress(parakeet_ctx* asr_ctx, parakeet_ctx* vad_ctx,
                                                          const float* samples, int n_samples, int sample_rate,
                                                          int decoder, const char* options_json,
                                                          parakeet_progress_fn fn, void* user_data) {
    return guarded<char*>(asr_ctx, nullptr, [&] {
        return cut(asr_ctx, vad_ctx, samples, n_samples, sample_rate, decoder, options_json,
                   pk::capi::progress_from(fn, user_data));
    });
}

char* parakeet_capi_transcribe_path_json_vad_with(parakeet_ctx* asr_ctx, parakeet_ctx* vad_ctx, const char* wav_path,
                                                  int decoder, const char* options_json) {
    return guarded<char*>(asr_ctx, nullptr, [&]() -> char* {
        pk::capi::asr_model(asr_ctx);  // the contexts first: a wrong one is not a file problem
        silero_of(vad_ctx);
        if (wav_path == nullptr) throw pk::InvalidArgument("WAV path is NULL");
        const pk::WavAudio wav = pk::read_wav_file(wav_path, 0);
        return cut(asr_ctx, vad_ctx, wav.samples.data(), static_cast<int64_t>(wav.samples.size()), wav.sample_rate,
                   decoder, options_json);
    });
}

}  // extern "C"
