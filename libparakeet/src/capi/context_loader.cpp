#include "capi/context_loader.h"

#include <memory>
#include <string>

#include "capi/environment.h"
#include "capi/load_options_json.h"
#include "model/bundle/bundle.h"

namespace pk::capi {

namespace {

// The component of a bundle to load; a plain file when it is not a bundle (then no component
// may be asked for).
GgufReader model_reader(GgufReader gguf, const std::string& component) {
    if (!is_bundle(gguf)) {
        if (!component.empty())
            throw InvalidArgument(gguf.name() + " is not a bundle, so it has no component '" + component + "'");
        return gguf;
    }
    const std::vector<BundleComponent> components = read_bundle(gguf);
    return component_view(gguf, choose_component(gguf, components, component));
}

}  // namespace

parakeet_ctx* load_context(const char* gguf_path, const char* options_json, const char* component) {
    if (gguf_path == nullptr) throw InvalidArgument("model path is NULL");
    apply_thread_environment();
    LoadOptions options = load_options_from_environment();
    apply_load_options_json(options_json, options);
    if (component != nullptr) options.component = component;
    auto ctx = std::make_unique<parakeet_ctx>();
    GgufReader gguf = model_reader(GgufReader::open(gguf_path), options.component);
    // The file's kind decides the loader; a VAD model takes no ASR load options.
    switch (detect_model_kind(gguf)) {
        case ModelKind::Vad:
            ctx->vad = SileroVad::load(gguf);
            ctx->kind = ModelKind::Vad;
            break;
        case ModelKind::Sound:
            ctx->sound = CedModel::load(std::move(gguf), options);
            ctx->kind = ModelKind::Sound;
            break;
        case ModelKind::Speaker:  // from the file itself: its identity is the file's hash
            ctx->speaker = speaker::SpeakerEncoder::load(gguf_path, options);
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
