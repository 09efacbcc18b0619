// The speaker encoder's C entry points: embeddings and the encoder's fingerprints.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "capi/context.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

// The encoder of a speaker context, or nullptr (for the calls that answer NULL / -1).
const pk::speaker::SpeakerEncoder* encoder_or_null(const parakeet_ctx* ctx) {
    return ctx != nullptr && ctx->kind == pk::ModelKind::Speaker ? ctx->speaker.get() : nullptr;
}

}  // namespace

extern "C" {

int parakeet_capi_speaker_dim(const parakeet_ctx* ctx) {
    const pk::speaker::SpeakerEncoder* e = encoder_or_null(ctx);
    return e != nullptr ? e->dim() : -1;
}

int parakeet_capi_speaker_embed_pcm(parakeet_ctx* speaker, const float* pcm, int n_samples, int sample_rate,
                                    float** out_embedding, int* out_dim) {
    if (out_embedding != nullptr) *out_embedding = nullptr;
    if (out_dim != nullptr) *out_dim = 0;
    if (speaker == nullptr || out_embedding == nullptr || out_dim == nullptr) return 1;
    return guarded<int>(speaker, 1, [&] {
        const std::vector<float> e = pk::capi::speaker_model(speaker).embed(pcm, n_samples, sample_rate);
        float* out = static_cast<float*>(std::malloc(e.size() * sizeof(float)));
        if (out == nullptr) throw std::bad_alloc();
        std::memcpy(out, e.data(), e.size() * sizeof(float));
        *out_embedding = out;
        *out_dim = static_cast<int>(e.size());
        return 0;
    });
}

void parakeet_capi_free_floats(float* p) { std::free(p); }

const char* parakeet_capi_speaker_encoder_family(const parakeet_ctx* speaker) {
    const pk::speaker::SpeakerEncoder* e = encoder_or_null(speaker);
    return e != nullptr ? e->family().c_str() : nullptr;
}

const char* parakeet_capi_speaker_identity(const parakeet_ctx* speaker) {
    const pk::speaker::SpeakerEncoder* e = encoder_or_null(speaker);
    return e != nullptr ? e->identity().c_str() : nullptr;
}

const char* parakeet_capi_speaker_last_warning(const parakeet_ctx* speaker) {
    if (encoder_or_null(speaker) == nullptr) return nullptr;
    parakeet_ctx* ctx = const_cast<parakeet_ctx*>(speaker);
    std::lock_guard<std::mutex> lock(ctx->error_mu);
    return ctx->speaker_warning.c_str();
}

}  // extern "C"
