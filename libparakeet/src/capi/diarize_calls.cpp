// Sortformer diarization through the C ABI: the offline calls (parakeet.cpp's diarize_path /
// diarize_pcm, and our diarize_pcm_with[_progress]).
#include <string>
#include <utility>

#include "audio/wav_reader.h"
#include "capi/context.h"
#include "capi/diar_default_segments.h"
#include "capi/diar_options_json.h"
#include "capi/progress_callback.h"
#include "common/json_writer.h"
#include "model/diar/diar_segments.h"
#include "model/diar/diar_streaming.h"
#include "model/diar/diarize_checkpoint.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

// Segment times with 2 decimals (10 ms units), as parakeet.cpp writes them.
constexpr int kTimeDecimals = 2;

std::string result_json(const pk::DiarModel& m, const pk::SpeakerProbabilities& p, const pk::capi::DiarOptions& o) {
    const pk::DiarConfig& c = m.config();
    const std::vector<pk::DiarSegment> segments =
        pk::speaker_segments(p.data.data(), p.frames, c.n_speakers, c.upsample_factor, o.post);
    pk::JsonWriter j;
    j.begin_object();
    j.key("speakers").value(c.n_speakers);
    j.key("segments").begin_array();
    for (const pk::DiarSegment& s : segments) {
        j.begin_object();
        j.key("speaker").value(s.speaker);
        j.key("start").value(s.start, kTimeDecimals);
        j.key("end").value(s.end, kTimeDecimals);
        j.end_object();
    }
    j.end_array();
    if (o.probabilities) {
        j.key("frame_sec").value(p.frame_sec, 3);
        j.key("probabilities").begin_array();  // one row per speaker, one value per frame
        for (int s = 0; s < c.n_speakers; ++s) {
            j.begin_array();
            for (int64_t f = 0; f < p.frames; ++f) j.exact(p.data[static_cast<size_t>(f * c.n_speakers + s)]);
            j.end_array();
        }
        j.end_array();
    }
    j.end_object();
    return j.str();
}

char* diarize_json(parakeet_ctx* ctx, const float* samples, int64_t n, int rate, const char* options_json,
                   pk::ProgressFn progress_fn = {}) {
    const pk::DiarModel& m = pk::capi::diar_model(ctx);
    pk::capi::DiarOptions defaults;
    defaults.post.onset = m.config().onset;
    defaults.post.offset = m.config().offset;
    const pk::capi::DiarOptions o = pk::capi::parse_diar_options(options_json, defaults, m);
    pk::RequestProgress progress(std::move(progress_fn));
    const pk::ProgressSpan whole{&progress, 0.0, 1.0};
    const pk::SpeakerProbabilities p = o.streaming
                                           ? pk::diar_streaming_probabilities(m, samples, n, rate, *o.streaming, whole)
                                           : pk::diarize_probabilities(m, samples, n, rate, whole);
    return pk::capi::to_c_string(result_json(m, p, o));
}

void check_buffer(const float* samples, int n_samples) {
    if (n_samples < 0 || (n_samples > 0 && samples == nullptr)) throw pk::InvalidArgument("invalid samples buffer");
}

}  // namespace

namespace pk::capi {

std::vector<DiarSegment> default_segments(const DiarModel& m, const float* samples, int64_t n, int sample_rate,
                                          const ProgressSpan& progress) {
    DiarPostProcessing post;
    post.onset = m.config().onset;
    post.offset = m.config().offset;
    const SpeakerProbabilities p = diarize_probabilities(m, samples, n, sample_rate, progress);
    return speaker_segments(p.data.data(), p.frames, m.config().n_speakers, m.config().upsample_factor, post);
}

}  // namespace pk::capi

extern "C" {

char* parakeet_capi_diarize_pcm(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate) {
    return guarded<char*>(ctx, nullptr, [&]() -> char* {
        check_buffer(samples, n_samples);
        return diarize_json(ctx, samples, n_samples, sample_rate, nullptr);
    });
}

char* parakeet_capi_diarize_pcm_with(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate,
                                     const char* options_json) {
    return guarded<char*>(ctx, nullptr, [&]() -> char* {
        check_buffer(samples, n_samples);
        return diarize_json(ctx, samples, n_samples, sample_rate, options_json);
    });
}

char* parakeet_capi_diarize_pcm_with_progress(parakeet_ctx* ctx, const float* samples, int n_samples,
                                              int sample_rate, const char* options_json, parakeet_progress_fn fn,
                                              void* user_data) {
    return guarded<char*>(ctx, nullptr, [&]() -> char* {
        check_buffer(samples, n_samples);
        return diarize_json(ctx, samples, n_samples, sample_rate, options_json, pk::capi::progress_from(fn, user_data));
    });
}

char* parakeet_capi_diarize_path(parakeet_ctx* ctx, const char* wav_path) {
    return guarded<char*>(ctx, nullptr, [&]() -> char* {
        pk::capi::diar_model(ctx);  // the kind first: a wrong context is not a file problem
        if (wav_path == nullptr) throw pk::InvalidArgument("WAV path is NULL");
        const pk::WavAudio wav = pk::read_wav_file(wav_path, 0);
        return diarize_json(ctx, wav.samples.data(), static_cast<int64_t>(wav.samples.size()), wav.sample_rate,
                            nullptr);
    });
}

}  // extern "C"
