// Diarization with names (parakeet.cpp ABI 10) and with voice profiles (additive): the
// Sortformer segments of a clip, plus per speaker slot the registry's name for its clean voice
// (model/speaker/slot_names.h), offline (every segment closed, one pass).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "capi/diar_default_segments.h"
#include "capi/named_slots.h"
#include "common/json_writer.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

constexpr int kTimeDecimals = 2;   // segment times, as diarize_pcm writes them
constexpr int kScoreDecimals = 4;

// diarize_pcm's document plus "names" and, with profiles, "speaker_profiles".
std::string named_json(int n_speakers, const std::vector<pk::DiarSegment>& segments,
                       const std::map<int, pk::speaker::SlotVoice>& slots, const pk::speaker::SpeakerEncoder* profiles) {
    pk::JsonWriter j;
    j.begin_object();
    j.key("speakers").value(n_speakers);
    j.key("segments").begin_array();
    for (const pk::DiarSegment& s : segments) {
        j.begin_object().key("speaker").value(s.speaker);
        j.key("start").value(s.start, kTimeDecimals).key("end").value(s.end, kTimeDecimals).end_object();
    }
    j.end_array();
    j.key("names").begin_object();
    for (const auto& [slot, v] : slots) {
        j.key(std::to_string(slot).c_str()).begin_object();
        j.key("name").value(v.match.name).key("score").value(static_cast<double>(v.match.score), kScoreDecimals);
        j.end_object();
    }
    j.end_object();
    if (profiles != nullptr) {
        j.key("speaker_profiles").begin_object().key("version").value(1);
        j.key("encoder").begin_object().key("identity").value(profiles->identity());
        j.key("dimension").value(profiles->dim()).end_object();
        j.key("speakers").begin_array();
        for (const auto& [slot, v] : slots) {
            j.begin_object().key("speaker").value(slot);
            j.key("clean_duration").value(v.clean_duration, kTimeDecimals).key("intervals").begin_array();
            for (const pk::speaker::TimeSpan& t : v.intervals)
                j.begin_object().key("start").value(t.start, kTimeDecimals).key("end").value(t.end, kTimeDecimals).end_object();
            j.end_array().key("unavailable_reason");
            if (v.unavailable_reason.empty()) j.document("null");
            else j.value(v.unavailable_reason);
            if (!v.embedding.empty()) {
                j.key("embedding").begin_array();
                for (float x : v.embedding) j.exact(x);
                j.end_array();
            }
            j.end_object();
        }
        j.end_array().end_object();
    }
    j.end_object();
    return j.str();
}

// The named (or, with `profiles`, the profiled) diarization of a clip.
char* diarize_with_names(parakeet_ctx* diar, parakeet_ctx* speaker, parakeet_speaker_registry* reg,
                         const float* samples, int n_samples, int sample_rate, float accept, float margin,
                         bool profiles) {
    if (diar == nullptr || speaker == nullptr) return nullptr;
    pk::capi::clear_error(speaker);
    std::vector<pk::DiarSegment> segments;
    int n_speakers = 0;
    const bool diarized = guarded<bool>(diar, false, [&] {
        if (n_samples <= 0 || samples == nullptr) throw pk::InvalidArgument("invalid samples buffer");
        const pk::DiarModel& m = pk::capi::diar_model(diar);
        n_speakers = m.config().n_speakers;
        segments = pk::capi::default_segments(m, samples, n_samples, sample_rate);
        return true;
    });
    if (!diarized) return nullptr;
    return guarded<char*>(speaker, nullptr, [&] {
        const auto slots =
            pk::capi::named_slots(reg, speaker, segments, samples, n_samples, sample_rate, accept, margin, profiles);
        const pk::speaker::SpeakerEncoder* enc = profiles ? &pk::capi::speaker_model(speaker) : nullptr;
        return pk::capi::to_c_string(named_json(n_speakers, segments, slots, enc));
    });
}

}  // namespace

extern "C" {

char* parakeet_capi_diarize_named_pcm_json(parakeet_ctx* diar, parakeet_ctx* speaker, parakeet_speaker_registry* reg,
                                           const float* samples, int n_samples, int sample_rate, float accept_threshold,
                                           float margin) {
    return diarize_with_names(diar, speaker, reg, samples, n_samples, sample_rate, accept_threshold, margin, false);
}

char* parakeet_capi_diarize_profiles_pcm_json(parakeet_ctx* diar, parakeet_ctx* speaker, parakeet_speaker_registry* reg,
                                              const float* samples, int n_samples, int sample_rate,
                                              float accept_threshold, float margin) {
    return diarize_with_names(diar, speaker, reg, samples, n_samples, sample_rate, accept_threshold, margin, true);
}

}  // extern "C"
