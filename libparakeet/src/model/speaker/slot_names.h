// Names and voice profiles for diarized speaker slots, offline (parakeet.cpp's
// diarize_named_pcm_json and diarize_profiles_pcm_json): each slot that has a segment gets its
// clean voice (clean_voice.h); with at least 2 s of it, its embedding and the registry's match.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/diar/diar_segments.h"
#include "model/speaker/clean_voice.h"
#include "model/speaker/speaker_encoder.h"
#include "model/speaker/speaker_registry.h"

namespace pk::speaker {

inline constexpr double kMinVoiceSec = 2.0;  // less clean voice leaves a slot unnamed

struct SlotVoice {
    std::vector<TimeSpan> intervals;  // the clean voice used
    double clean_duration = 0;        // their total, seconds
    // "" when embedded; "insufficient_clean_speech" (under kMinVoiceSec) or "embedding_failed"
    // (the encoder refused the audio or gave no usable embedding).
    std::string unavailable_reason;
    std::vector<float> embedding;     // L2-normalised; empty unless embedded
    SpeakerMatch match;               // "" and 0 unless embedded and matched
};

// samples: the clip (n at `rate`) the segments were found in. accept / margin of 0: the
// registry's defaults. With an empty registry nothing is embedded unless `embed_always`. The
// caller has checked that the registry takes this encoder's embeddings
// (SpeakerRegistry::check_encoder).
std::map<int, SlotVoice> slot_voices(const std::vector<DiarSegment>& segments, const SpeakerEncoder& encoder,
                                     const SpeakerRegistry& registry, const float* samples, int64_t n, int rate,
                                     float accept = 0, float margin = 0, bool embed_always = false);

}  // namespace pk::speaker
