// The transcription entry points of the C ABI.
#include "audio/wav_reader.h"
#include "capi/context.h"
#include "capi/transcript_json.h"
#include "common/errors.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

struct Result {
    pk::Transcript transcript;
    double seconds = 0.0;  // of input audio
};

void check_ctx(const parakeet_ctx* ctx) {
    if (ctx == nullptr) throw pk::InvalidInput("context is NULL");
}

Result run_pcm(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate, int decoder) {
    check_ctx(ctx);
    const pk::DecoderChoice choice = pk::decoder_from_int(decoder);
    Result r;
    r.transcript = ctx->model->transcribe(samples, n_samples, sample_rate, choice);
    r.seconds = sample_rate > 0 ? static_cast<double>(n_samples) / sample_rate : 0.0;
    return r;
}

Result run_path(parakeet_ctx* ctx, const char* path, int decoder) {
    check_ctx(ctx);
    const pk::DecoderChoice choice = pk::decoder_from_int(decoder);
    if (path == nullptr) throw pk::InvalidInput("WAV path is NULL");
    const pk::WavAudio wav = pk::read_wav_file(path, 0);
    Result r;
    r.transcript = ctx->model->transcribe(wav.samples.data(), static_cast<int64_t>(wav.samples.size()),
                                          wav.sample_rate, choice);
    r.seconds = static_cast<double>(wav.samples.size()) / wav.sample_rate;
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

}  // extern "C"
