// The speaker part the named diarization calls share (diarize_named / diarize_profiles /
// transcribe_and_diarize_named): each diarized slot's clean voice, embedding and registry match.
#pragma once

#include <map>
#include <vector>

#include "capi/speaker_registry_handle.h"
#include "model/speaker/slot_names.h"

namespace pk::capi {

// slot_voices() with the speaker context's encoder and `reg` (NULL: an empty registry), under
// the registry's lock, after the fingerprint check (whose warning goes on the speaker context).
// Throws as those do; the caller guards on the speaker context.
std::map<int, speaker::SlotVoice> named_slots(parakeet_speaker_registry* reg, parakeet_ctx* speaker,
                                              const std::vector<DiarSegment>& segments, const float* samples,
                                              int64_t n, int rate, float accept, float margin, bool embed_always);

}  // namespace pk::capi
