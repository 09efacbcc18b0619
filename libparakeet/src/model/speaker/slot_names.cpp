#include "model/speaker/slot_names.h"

#include <algorithm>
#include <cmath>

#include "model/speaker/clean_voice.h"

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

std::map<int, SpeakerMatch> name_slots(const std::vector<DiarSegment>& segments, const SpeakerEncoder& encoder,
                                       const SpeakerRegistry& registry, const float* samples, int64_t n, int rate,
                                       float accept, float margin) {
    std::map<int, SpeakerMatch> names;
    for (const DiarSegment& s : segments) names[s.speaker];
    if (registry.size() == 0) return names;  // nothing to match: no embedding needed
    for (auto& [slot, match] : names) {
        const std::vector<TimeSpan> clean = clean_voice(segments, slot);
        if (clean.empty()) continue;
        const std::vector<float> voice = gather(samples, n, rate, clean);
        const std::vector<float> e = encoder.embed(voice.data(), static_cast<int64_t>(voice.size()), rate);
        match = registry.identify(e.data(), accept, margin);
    }
    return names;
}

}  // namespace pk::speaker
