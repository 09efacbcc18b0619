// The Silero VAD through the C ABI: one-shot detection (pcm, WAV path) and streams.
#include <memory>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "capi/context.h"
#include "capi/vad_options_json.h"
#include "common/json_writer.h"
#include "model/vad/vad_detect.h"
#include "model/vad/vad_rate.h"
#include "model/vad/vad_stream.h"
#include "parakeet_capi.h"
#include "runtime/cpu_features.h"
#include "runtime/thread_budget.h"
#include "runtime/thread_team.h"

using pk::capi::guarded;

struct parakeet_vad_stream {
    parakeet_ctx* ctx;
    pk::VadStream stream;
};

namespace {

// Times are written with 6 decimals: a sample at 16 kHz is 62.5 µs, so a time reads back to
// its sample.
constexpr int kTimeDecimals = 6;

std::string result_json(const pk::SileroVad& vad, const pk::VadResult& r, const pk::VadOptions& o) {
    pk::JsonWriter j;
    j.begin_object();
    j.key("mode").value(o.mode == pk::VadMode::Speech ? "speech" : "segments");
    j.key("duration").value(r.duration, kTimeDecimals);
    j.key("frame_sec").value(r.frame_sec, 3);
    j.key("sample_rate").value(r.model_rate);
    j.key("backend").value("cpu");
    j.key("isa").value(pk::isa_level_name(vad.isa()));
    j.key("segments").begin_array();
    for (const pk::VadSegment& s : r.segments) {
        j.begin_object();
        j.key("start").value(s.start, kTimeDecimals);
        j.key("end").value(s.end, kTimeDecimals);
        j.end_object();
    }
    j.end_array();
    if (o.probabilities) {
        j.key("probabilities").begin_array();
        for (float p : r.probabilities) j.exact(p);
        j.end_array();
    }
    j.end_object();
    return j.str();
}

// The PCM calls keep Silero's rates; the message says which calls take any other.
[[noreturn]] void refuse_pcm_rate(int sample_rate, const char* rates) {
    throw pk::InvalidAudio("invalid sample rate " + std::to_string(sample_rate) + ": the Silero VAD takes " + rates +
                           " Hz from PCM; resample first (parakeet_capi_vad_path_json and "
                           "parakeet_capi_transcribe_*_vad_with resample any rate themselves)");
}

// Audio at a rate the VAD lacks (only the path call lets one through) is resampled to 16 kHz
// first; "duration" stays the input's.
char* detect_json(parakeet_ctx* ctx, const float* samples, int64_t n, int rate, const char* options_json) {
    const pk::SileroVad& vad = pk::capi::vad_model(ctx);
    const pk::VadOptions o = pk::capi::parse_vad_options(options_json);
    // The resampling and the chunks' features on the default thread budget (PARAKEET_THREADS);
    // the same result on any team.
    pk::ThreadTeam team(pk::default_thread_count());
    const double input_seconds = rate > 0 ? static_cast<double>(n) / rate : 0.0;
    const int input_rate = rate;
    std::vector<float> resampled;
    pk::resample_for_vad(samples, n, rate, resampled, team);
    pk::VadResult r = pk::detect_speech(vad, samples, n, rate, o, &team);
    if (rate != input_rate) r.duration = input_seconds;  // not the resampled length, rounded up to a sample
    return pk::capi::to_c_string(result_json(vad, r, o));
}

}  // namespace

extern "C" {

char* parakeet_capi_vad_pcm_json(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate,
                                 const char* options_json) {
    return guarded<char*>(ctx, nullptr, [&]() -> char* {
        if (n_samples < 0 || (n_samples > 0 && samples == nullptr))
            throw pk::InvalidArgument("invalid samples buffer");
        pk::capi::vad_model(ctx);  // the kind first: a wrong context is not a rate problem
        if (!pk::vad_takes_rate(sample_rate)) refuse_pcm_rate(sample_rate, "16000 or 8000 (or a multiple of 16000)");
        return detect_json(ctx, samples, n_samples, sample_rate, options_json);
    });
}

char* parakeet_capi_vad_path_json(parakeet_ctx* ctx, const char* wav_path, const char* options_json) {
    return guarded<char*>(ctx, nullptr, [&]() -> char* {
        pk::capi::vad_model(ctx);  // the kind first: a wrong context is not a file problem
        if (wav_path == nullptr) throw pk::InvalidArgument("WAV path is NULL");
        const pk::WavAudio wav = pk::read_wav_file(wav_path, 0);
        return detect_json(ctx, wav.samples.data(), static_cast<int64_t>(wav.samples.size()), wav.sample_rate,
                           options_json);
    });
}

parakeet_vad_stream* parakeet_capi_vad_stream_begin(parakeet_ctx* ctx, int sample_rate, const char* options_json) {
    return guarded<parakeet_vad_stream*>(ctx, nullptr, [&]() -> parakeet_vad_stream* {
        const pk::SileroVad& vad = pk::capi::vad_model(ctx);
        const pk::VadOptions o = pk::capi::parse_vad_options(options_json);
        if (o.mode != pk::VadMode::Speech) throw pk::InvalidArgument("VAD stream options: mode must be speech");
        if (vad.branch(sample_rate) == nullptr) refuse_pcm_rate(sample_rate, "16000 or 8000");
        // "probabilities" is accepted for parakeet.cpp's callers; a feed always returns them.
        return new parakeet_vad_stream{ctx, pk::VadStream(vad, sample_rate, o)};
    });
}

char* parakeet_capi_vad_stream_feed_json(parakeet_vad_stream* s, const float* pcm, int n_samples, int is_last) {
    parakeet_ctx* ctx = s == nullptr ? nullptr : s->ctx;
    return guarded<char*>(ctx, nullptr, [&]() -> char* {
        if (s == nullptr) throw pk::InvalidArgument("VAD stream is NULL");
        const pk::VadFeedResult r = s->stream.feed(pcm, n_samples, is_last != 0);
        const double rate = s->stream.sample_rate();
        pk::JsonWriter j;
        j.begin_object();
        j.key("frame_sec").value(s->stream.chunk() / rate, 3);
        j.key("first_frame").value(r.first_frame);
        j.key("events").begin_array();
        for (const pk::VadEvent& e : r.events) {
            j.begin_object();
            j.key("type").value(e.start ? "start" : "end");
            j.key("time").value(static_cast<double>(e.sample) / rate, kTimeDecimals);
            j.end_object();
        }
        j.end_array();
        j.key("probabilities").begin_array();
        for (float p : r.probabilities) j.exact(p);
        j.end_array();
        j.end_object();
        return pk::capi::to_c_string(j.str());
    });
}

int parakeet_capi_vad_stream_reset(parakeet_vad_stream* s) {
    if (s == nullptr) return -1;
    return guarded<int>(s->ctx, -1, [&]() -> int {
        s->stream.reset();
        return 0;
    });
}

void parakeet_capi_vad_stream_free(parakeet_vad_stream* s) { delete s; }

}  // extern "C"
