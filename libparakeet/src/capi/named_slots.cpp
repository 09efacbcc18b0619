#include "capi/named_slots.h"

#include <mutex>

namespace pk::capi {

std::map<int, speaker::SlotVoice> named_slots(parakeet_speaker_registry* reg, parakeet_ctx* speaker,
                                              const std::vector<DiarSegment>& segments, const float* samples,
                                              int64_t n, int rate, float accept, float margin, bool embed_always) {
    static const speaker::SpeakerRegistry kEmpty;  // stands for a NULL registry
    std::unique_lock<std::mutex> lock;
    if (reg != nullptr) lock = std::unique_lock<std::mutex>(reg->mu);
    const speaker::SpeakerRegistry& registry = reg != nullptr ? reg->registry : kEmpty;
    check_registry_encoder(registry, speaker);
    return speaker::slot_voices(segments, speaker_model(speaker), registry, samples, n, rate, accept, margin,
                                embed_always);
}

}  // namespace pk::capi
