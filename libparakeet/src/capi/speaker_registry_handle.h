// parakeet_speaker_registry, the C ABI's voice-registry handle, and what the calls that use a
// registry with a speaker encoder share.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "capi/context.h"
#include "model/speaker/speaker_registry.h"

struct parakeet_speaker_registry {
    std::mutex mu;  // one call at a time
    pk::speaker::SpeakerRegistry registry;
    std::string last_error;  // of the last registry call ("" after a success)
};

namespace pk::capi {

inline speaker::EncoderFingerprint fingerprint_of(const speaker::SpeakerEncoder& e) {
    return {e.family(), e.identity()};
}

// Checks that `registry` can compare embeddings of the speaker context's encoder (throws when
// not) and records the fingerprint warning on the speaker context.
inline void check_registry_encoder(const speaker::SpeakerRegistry& registry, parakeet_ctx* speaker) {
    const speaker::SpeakerEncoder& enc = speaker_model(speaker);
    const std::string warning = registry.check_encoder(enc.dim(), fingerprint_of(enc));
    std::lock_guard<std::mutex> lock(speaker->error_mu);
    speaker->speaker_warning = warning;
}

// The embedding of the PCM, after check_registry_encoder. The caller holds reg->mu.
inline std::vector<float> checked_embedding(parakeet_speaker_registry* reg, parakeet_ctx* speaker, const float* pcm,
                                            int n, int sample_rate) {
    check_registry_encoder(reg->registry, speaker);
    return speaker_model(speaker).embed(pcm, n, sample_rate);
}

}  // namespace pk::capi
