#include "capi/context_loader.h"

#include <memory>
#include <string>
#include <utility>

#include "capi/environment.h"
#include "capi/load_options_json.h"
#include "model/bundle/bundle.h"

namespace pk::capi {

namespace {

// What to load: a plain file, or the component of a bundle, whose source_sha256 stands for its
// source file where a loader needs the file's hash.
struct ModelSource {
    GgufReader gguf;
    bool in_bundle = false;
    std::string source_sha256;  // "" when the bundle does not record it
};

// The component of a bundle to load; a plain file when it is not a bundle (then no component
// may be asked for).
ModelSource model_source(GgufReader gguf, const std::string& component) {
    if (!is_bundle(gguf)) {
        if (!component.empty())
            throw InvalidArgument(gguf.name() + " is not a bundle, so it has no component '" + component + "'");
        return {std::move(gguf), false, ""};
    }
    const std::vector<BundleComponent> components = read_bundle(gguf);
    const BundleComponent& chosen = choose_component(gguf, components, component);
    return {component_view(gguf, chosen), true, chosen.source_sha256};
}

// A speaker encoder's identity is the hash of its file (parakeet.cpp's fingerprint); a bundle's
// component takes its source file's hash from the bundle, as parakeet.cpp does.
std::unique_ptr<speaker::SpeakerEncoder> load_speaker(ModelSource source, const char* path,
                                                      const LoadOptions& options) {
    if (!source.in_bundle) return speaker::SpeakerEncoder::load(path, options);
    if (source.source_sha256.empty())
        throw ModelError(source.gguf.name() +
                         ": a voice component needs its source_sha256 key, its speaker identity is the source file's hash");
    return speaker::SpeakerEncoder::load(std::move(source.gguf), "sha256:" + source.source_sha256, options);
}

}  // namespace

parakeet_ctx* load_context(const char* gguf_path, const char* options_json, const char* component) {
    if (gguf_path == nullptr) throw InvalidArgument("model path is NULL");
    apply_thread_environment();
    LoadOptions options = load_options_from_environment();
    apply_load_options_json(options_json, options);
    if (component != nullptr) options.component = component;
    auto ctx = std::make_unique<parakeet_ctx>();
    ModelSource source = model_source(GgufReader::open(gguf_path), options.component);
    GgufReader& gguf = source.gguf;
    // The file's kind decides the loader; a VAD model takes no ASR load options but the level.
    switch (detect_model_kind(gguf)) {
        case ModelKind::Vad:
            ctx->vad = SileroVad::load(gguf, options.isa);
            ctx->kind = ModelKind::Vad;
            break;
        case ModelKind::Sound:
            ctx->sound = CedModel::load(std::move(gguf), options);
            ctx->kind = ModelKind::Sound;
            break;
        case ModelKind::Speaker:
            ctx->speaker = load_speaker(std::move(source), gguf_path, options);
            ctx->kind = ModelKind::Speaker;
            break;
        case ModelKind::Diarization:
            ctx->diar = DiarModel::load(std::move(gguf), options);
            ctx->kind = ModelKind::Diarization;
            break;
        default:
            ctx->model = Model::load(std::move(gguf), options);
            ctx->kind = ModelKind::Asr;
    }
    return ctx.release();
}

}  // namespace pk::capi
