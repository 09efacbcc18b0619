// The CED sound tagger through the C ABI: its classes and one-shot classification of a clip.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "capi/context.h"
#include "common/json_writer.h"
#include "model/sound/top_classes.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

extern "C" {

int parakeet_capi_num_classes(const parakeet_ctx* ctx) {
    if (ctx == nullptr || ctx->kind != pk::ModelKind::Sound) return -1;
    return ctx->sound->config().n_classes;
}

const char* parakeet_capi_class_label(const parakeet_ctx* ctx, int index) {
    if (ctx == nullptr || ctx->kind != pk::ModelKind::Sound) return nullptr;
    const std::vector<std::string>& labels = ctx->sound->labels();
    if (index < 0 || static_cast<size_t>(index) >= labels.size()) return nullptr;
    return labels[static_cast<size_t>(index)].c_str();
}

char* parakeet_capi_sound_classify_pcm_json(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate,
                                            int top_k) {
    return guarded<char*>(ctx, nullptr, [&]() -> char* {
        const pk::CedModel& ced = pk::capi::sound_model(ctx);
        if (n_samples < 0 || (n_samples > 0 && samples == nullptr)) throw pk::InvalidArgument("invalid samples buffer");
        if (sample_rate != ced.config().sample_rate)
            throw pk::InvalidAudio("invalid sample rate " + std::to_string(sample_rate) + ": the sound tagger takes " +
                                   std::to_string(ced.config().sample_rate) + " Hz; resample first");
        if (!std::all_of(samples, samples + n_samples, [](float v) { return std::isfinite(v); }))
            throw pk::InvalidAudio("the samples hold NaN or infinity");
        const std::vector<float> scores = ced.classify(samples, n_samples);
        pk::JsonWriter j;
        j.begin_array();
        for (int c : pk::top_classes(scores, top_k)) {
            j.begin_object();
            j.key("index").value(c);
            j.key("label").value(ced.labels()[static_cast<size_t>(c)]);
            j.key("score").exact(scores[static_cast<size_t>(c)]);
            j.end_object();
        }
        j.end_array();
        return pk::capi::to_c_string(j.str());
    });
}

}  // extern "C"
