// The transcription entry points of the C ABI.
#include <memory>
#include <utility>

#include "audio/wav_reader.h"
#include "capi/progress_callback.h"
#include "capi/context.h"
#include "capi/decoder_number.h"
#include "capi/transcript_json.h"
#include "common/errors.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

struct Result {
    pk::Transcript transcript;
    double seconds = 0.0;  // of input audio
};

// The request options of a call: the decoder, the caller's progress callback when given, and a
// prompt model's locale (NULL or "": its default).
pk::RequestOptions options_for(int decoder, parakeet_progress_fn fn, void* user_data, const char* lang) {
    pk::RequestOptions options(pk::capi::decoder_from_int(decoder));
    options.progress = pk::capi::progress_from(fn, user_data);
    if (lang != nullptr) options.language = lang;
    return options;
}

// The context's request batcher when batching is on (parakeet_capi_set_request_batching), else
// the model alone.
pk::Transcript transcribe(parakeet_ctx* ctx, const pk::Model& model, const float* samples, int64_t n,
                          int sample_rate, const pk::RequestOptions& options) {
    if (const std::shared_ptr<pk::RequestBatcher> batcher = pk::capi::request_batcher(ctx))
        return batcher->transcribe(samples, n, sample_rate, options);
    return model.transcribe(samples, n, sample_rate, options);
}

Result run_pcm(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate, int decoder,
               parakeet_progress_fn fn = nullptr, void* user_data = nullptr, const char* lang = nullptr) {
    pk::Model& model = pk::capi::asr_model(ctx);
    const pk::RequestOptions options = options_for(decoder, fn, user_data, lang);
    Result r;
    r.transcript = transcribe(ctx, model, samples, n_samples, sample_rate, options);
    r.seconds = sample_rate > 0 ? static_cast<double>(n_samples) / sample_rate : 0.0;
    return r;
}

Result run_path(parakeet_ctx* ctx, const char* path, int decoder, parakeet_progress_fn fn = nullptr,
                void* user_data = nullptr, const char* lang = nullptr) {
    pk::Model& model = pk::capi::asr_model(ctx);
    const pk::RequestOptions options = options_for(decoder, fn, user_data, lang);
    if (path == nullptr) throw pk::InvalidArgument("WAV path is NULL");
    pk::WavAudio wav = pk::read_wav_file(path, 0);
    Result r;
    r.seconds = static_cast<double>(wav.samples.size()) / wav.sample_rate;
    if (pk::capi::request_batcher(ctx)) {
        r.transcript = transcribe(ctx, model, wav.samples.data(), static_cast<int64_t>(wav.samples.size()),
                                  wav.sample_rate, options);
    } else {
        // The model frees the samples once resampled: a long file is never held at two rates.
        r.transcript = model.transcribe(std::move(wav.samples), wav.sample_rate, options);
    }
    return r;
}

char* as_text(const Result& r) { return pk::capi::to_c_string(r.transcript.text); }
char* as_json(const Result& r) {
    return pk::capi::to_c_string(pk::capi::transcript_to_json(r.transcript, r.seconds));
}

}  // namespace

extern "C" {

char* parakeet_capi_transcribe_pcm(parakeet_ctx* ctx, const float* samples, int n_samples,
                                   int sample_rate, int decoder) {
    return guarded<char*>(ctx, nullptr,
                          [&] { return as_text(run_pcm(ctx, samples, n_samples, sample_rate, decoder)); });
}

char* parakeet_capi_transcribe_path(parakeet_ctx* ctx, const char* wav_path, int decoder) {
    return guarded<char*>(ctx, nullptr, [&] { return as_text(run_path(ctx, wav_path, decoder)); });
}

char* parakeet_capi_transcribe_pcm_json(parakeet_ctx* ctx, const float* samples, int n_samples,
                                        int sample_rate, int decoder) {
    return guarded<char*>(ctx, nullptr,
                          [&] { return as_json(run_pcm(ctx, samples, n_samples, sample_rate, decoder)); });
}

char* parakeet_capi_transcribe_path_json(parakeet_ctx* ctx, const char* wav_path, int decoder) {
    return guarded<char*>(ctx, nullptr, [&] { return as_json(run_path(ctx, wav_path, decoder)); });
}

char* parakeet_capi_transcribe_pcm_json_progress(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                 int sample_rate, int decoder, parakeet_progress_fn fn,
                                                 void* user_data) {
    return guarded<char*>(ctx, nullptr, [&] {
        return as_json(run_pcm(ctx, samples, n_samples, sample_rate, decoder, fn, user_data));
    });
}

char* parakeet_capi_transcribe_path_json_progress(parakeet_ctx* ctx, const char* wav_path, int decoder,
                                                  parakeet_progress_fn fn, void* user_data) {
    return guarded<char*>(ctx, nullptr, [&] { return as_json(run_path(ctx, wav_path, decoder, fn, user_data)); });
}

char* parakeet_capi_transcribe_pcm_json_lang_progress(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                      int sample_rate, int decoder, const char* target_lang,
                                                      parakeet_progress_fn fn, void* user_data) {
    return guarded<char*>(ctx, nullptr, [&] {
        return as_json(run_pcm(ctx, samples, n_samples, sample_rate, decoder, fn, user_data, target_lang));
    });
}

char* parakeet_capi_transcribe_path_lang(parakeet_ctx* ctx, const char* wav_path, int decoder,
                                         const char* target_lang) {
    return guarded<char*>(ctx, nullptr,
                          [&] { return as_text(run_path(ctx, wav_path, decoder, nullptr, nullptr, target_lang)); });
}

char* parakeet_capi_transcribe_pcm_lang(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate,
                                        int decoder, const char* target_lang) {
    return guarded<char*>(ctx, nullptr, [&] {
        return as_text(run_pcm(ctx, samples, n_samples, sample_rate, decoder, nullptr, nullptr, target_lang));
    });
}

}  // extern "C"
