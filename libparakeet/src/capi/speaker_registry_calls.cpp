// The voice registry's C entry points (model/speaker/speaker_registry.h holds the rules):
// enrolment by PCM or by embedding, identification, fingerprints, and the registry file.
// Errors of the registry's own calls go on the registry (parakeet_capi_speaker_registry_last_error);
// those of the calls that run the encoder (enroll, identify) go on the speaker context.
#include <mutex>
#include <string>
#include <vector>

#include "capi/context.h"
#include "capi/speaker_registry_handle.h"
#include "common/json_writer.h"
#include "model/speaker/speaker_registry_file.h"
#include "parakeet_capi.h"

namespace {

using pk::capi::guarded;
using pk::speaker::EncoderFingerprint;

// guarded() for the calls whose errors belong to the registry: the message goes to
// reg->last_error and to the calling thread's error.
template <class R, class Body>
R registry_guarded(parakeet_speaker_registry* reg, R failure, Body&& body) noexcept {
    std::lock_guard<std::mutex> lock(reg->mu);
    return guarded<R>(nullptr, failure, [&]() -> R {
        try {
            R result = body();
            reg->last_error.clear();
            return result;
        } catch (const std::exception& e) {
            reg->last_error = e.what();
            throw;
        }
    });
}

}  // namespace

extern "C" {

parakeet_speaker_registry* parakeet_capi_speaker_registry_new(void) {
    return guarded<parakeet_speaker_registry*>(nullptr, nullptr, [] { return new parakeet_speaker_registry(); });
}

void parakeet_capi_speaker_registry_free(parakeet_speaker_registry* reg) { delete reg; }

int parakeet_capi_speaker_registry_size(const parakeet_speaker_registry* reg) {
    if (reg == nullptr) return 0;
    std::lock_guard<std::mutex> lock(const_cast<parakeet_speaker_registry*>(reg)->mu);
    return reg->registry.size();
}

const char* parakeet_capi_speaker_registry_last_error(const parakeet_speaker_registry* reg) {
    if (reg == nullptr) return "registry is NULL";
    std::lock_guard<std::mutex> lock(const_cast<parakeet_speaker_registry*>(reg)->mu);
    return reg->last_error.c_str();
}

int parakeet_capi_speaker_enroll(parakeet_speaker_registry* reg, parakeet_ctx* speaker, const char* name,
                                 const float* pcm, int n, int sample_rate) {
    if (reg == nullptr || speaker == nullptr) return 1;
    std::lock_guard<std::mutex> lock(reg->mu);
    return guarded<int>(speaker, 1, [&] {
        const std::vector<float> e = pk::capi::checked_embedding(reg, speaker, pcm, n, sample_rate);
        // An empty or fingerprinted registry records the encoder; an older one without a
        // fingerprint stays without (the warning said so).
        const bool keeps_fingerprint = reg->registry.size() == 0 || !reg->registry.fingerprint().empty();
        const EncoderFingerprint fp = keeps_fingerprint ? pk::capi::fingerprint_of(*speaker->speaker) : EncoderFingerprint{};
        reg->registry.add(name != nullptr ? name : "", e.data(), static_cast<int>(e.size()), fp);
        return 0;
    });
}

int parakeet_capi_speaker_registry_add_embedding(parakeet_speaker_registry* reg, const char* name,
                                                 const float* embedding, int dim) {
    return parakeet_capi_speaker_registry_add_embedding_fp(reg, name, embedding, dim, nullptr, nullptr);
}

int parakeet_capi_speaker_registry_add_embedding_fp(parakeet_speaker_registry* reg, const char* name,
                                                    const float* embedding, int dim, const char* encoder_family,
                                                    const char* encoder_weights) {
    if (reg == nullptr) return 1;
    return registry_guarded<int>(reg, 1, [&] {
        // Without a family there is no fingerprint: a plain add.
        const bool has_family = encoder_family != nullptr && *encoder_family != '\0';
        const EncoderFingerprint fp = has_family ? EncoderFingerprint{encoder_family, encoder_weights != nullptr ? encoder_weights : ""}
                                                 : EncoderFingerprint{};
        reg->registry.add(name != nullptr ? name : "", embedding, dim, fp);
        return 0;
    });
}

const char* parakeet_capi_speaker_registry_encoder_family(const parakeet_speaker_registry* reg) {
    return reg != nullptr ? reg->registry.fingerprint().family.c_str() : nullptr;
}

const char* parakeet_capi_speaker_registry_encoder_weights(const parakeet_speaker_registry* reg) {
    return reg != nullptr ? reg->registry.fingerprint().weights.c_str() : nullptr;
}

void parakeet_capi_speaker_registry_set_strict(parakeet_speaker_registry* reg, int strict) {
    if (reg == nullptr) return;
    std::lock_guard<std::mutex> lock(reg->mu);
    reg->registry.set_strict(strict != 0);
}

int parakeet_capi_speaker_registry_save(const parakeet_speaker_registry* reg, const char* path) {
    if (reg == nullptr) return 1;
    auto* r = const_cast<parakeet_speaker_registry*>(reg);
    return registry_guarded<int>(r, 1, [&] {
        if (path == nullptr) throw pk::InvalidArgument("registry path is NULL");
        pk::speaker::save_registry(r->registry, path);
        return 0;
    });
}

parakeet_speaker_registry* parakeet_capi_speaker_registry_load(const char* path) {
    return guarded<parakeet_speaker_registry*>(nullptr, nullptr, [&] {
        if (path == nullptr) throw pk::InvalidArgument("registry path is NULL");
        auto reg = std::make_unique<parakeet_speaker_registry>();
        reg->registry = pk::speaker::load_registry(path);
        return reg.release();
    });
}

char* parakeet_capi_speaker_identify_pcm_json(parakeet_speaker_registry* reg, parakeet_ctx* speaker,
                                              const float* pcm, int n, int sample_rate) {
    if (reg == nullptr || speaker == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(reg->mu);
    return guarded<char*>(speaker, nullptr, [&] {
        const std::vector<float> e = pk::capi::checked_embedding(reg, speaker, pcm, n, sample_rate);
        const pk::speaker::SpeakerMatch m = reg->registry.identify(e.data());
        pk::JsonWriter j;
        j.begin_object().key("name").value(m.name).key("score").value(static_cast<double>(m.score), 4).end_object();
        return pk::capi::to_c_string(j.str());
    });
}

}  // extern "C"
