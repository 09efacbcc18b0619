// Names for diarized speaker slots, offline (parakeet.cpp's diarize_named_pcm_json): each slot
// that has a segment gets the registry's match for its clean voice (clean_voice.h), or "" with
// score 0 when it has too little of it or the registry is empty.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "model/diar/diar_segments.h"
#include "model/speaker/speaker_encoder.h"
#include "model/speaker/speaker_registry.h"

namespace pk::speaker {

// samples: the clip (n at `rate`) the segments were found in. accept / margin of 0: the
// registry's defaults. The caller has checked that the registry takes this encoder's embeddings
// (SpeakerRegistry::check_encoder). Throws what embedding throws.
std::map<int, SpeakerMatch> name_slots(const std::vector<DiarSegment>& segments, const SpeakerEncoder& encoder,
                                       const SpeakerRegistry& registry, const float* samples, int64_t n, int rate,
                                       float accept = 0, float margin = 0);

}  // namespace pk::speaker
