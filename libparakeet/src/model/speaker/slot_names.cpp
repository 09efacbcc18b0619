#include "model/speaker/slot_names.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <new>

namespace pk::speaker {

namespace {

// The samples of `spans` (seconds) from a clip at `rate`, end to end.
std::vector<float> gather(const float* samples, int64_t n, int rate, const std::vector<TimeSpan>& spans) {
    std::vector<float> out;
    for (const TimeSpan& s : spans) {
        const int64_t a = std::min<int64_t>(n, std::llround(s.start * rate));
        const int64_t b = std::min<int64_t>(n, std::llround(s.end * rate));
        if (b > a) out.insert(out.end(), samples + a, samples + b);
    }
    return out;
}

}  // namespace

std::map<int, SlotVoice> slot_voices(const std::vector<DiarSegment>& segments, const SpeakerEncoder& encoder,
                                     const SpeakerRegistry& registry, const float* samples, int64_t n, int rate,
                                     float accept, float margin, bool embed_always) {
    std::map<int, SlotVoice> slots;
    for (const DiarSegment& s : segments) slots[s.speaker];
    for (auto& [slot, v] : slots) {
        v.intervals = clean_voice(segments, slot);
        v.clean_duration = total_seconds(v.intervals);
        if (v.clean_duration < kMinVoiceSec) {
            v.unavailable_reason = "insufficient_clean_speech";
            continue;
        }
        if (registry.size() == 0 && !embed_always) continue;  // nothing to match
        const std::vector<float> voice = gather(samples, n, rate, v.intervals);
        try {
            v.embedding = encoder.embed(voice.data(), static_cast<int64_t>(voice.size()), rate);
        } catch (const std::bad_alloc&) {
            throw;
        } catch (const std::exception&) {  // a slot the encoder cannot embed stays unnamed
            v.unavailable_reason = "embedding_failed";
            continue;
        }
        if (registry.size() > 0) v.match = registry.identify(v.embedding.data(), accept, margin);
    }
    return slots;
}

}  // namespace pk::speaker
