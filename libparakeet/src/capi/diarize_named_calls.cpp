// Diarization with names (parakeet.cpp ABI 10): the Sortformer segments of a clip, plus per
// speaker slot the registry's name for its clean voice (model/speaker/clean_voice.h), offline
// (every segment closed, one pass).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "capi/diar_default_segments.h"
#include "capi/speaker_registry_handle.h"
#include "common/json_writer.h"
#include "model/speaker/slot_names.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

constexpr int kTimeDecimals = 2;   // segment times, as diarize_pcm writes them
constexpr int kScoreDecimals = 4;

std::string named_json(int n_speakers, const std::vector<pk::DiarSegment>& segments,
                       const std::map<int, pk::speaker::SpeakerMatch>& names) {
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
    for (const auto& [slot, match] : names) {
        j.key(std::to_string(slot).c_str()).begin_object();
        j.key("name").value(match.name).key("score").value(static_cast<double>(match.score), kScoreDecimals);
        j.end_object();
    }
    j.end_object();
    j.end_object();
    return j.str();
}

}  // namespace

extern "C" {

char* parakeet_capi_diarize_named_pcm_json(parakeet_ctx* diar, parakeet_ctx* speaker, parakeet_speaker_registry* reg,
                                           const float* samples, int n_samples, int sample_rate, float accept_threshold,
                                           float margin) {
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
    std::unique_lock<std::mutex> lock;
    if (reg != nullptr) lock = std::unique_lock<std::mutex>(reg->mu);
    return guarded<char*>(speaker, nullptr, [&] {
        static const pk::speaker::SpeakerRegistry kEmpty;  // stands for a NULL registry
        const pk::speaker::SpeakerRegistry& registry = reg != nullptr ? reg->registry : kEmpty;
        pk::capi::check_registry_encoder(registry, speaker);
        const auto names = pk::speaker::name_slots(segments, pk::capi::speaker_model(speaker), registry, samples,
                                                   n_samples, sample_rate, accept_threshold, margin);
        return pk::capi::to_c_string(named_json(n_speakers, segments, names));
    });
}

}  // extern "C"
