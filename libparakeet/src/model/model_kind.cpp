#include "model/model_kind.h"

#include <string>

#include "common/errors.h"
#include "model/gguf_schema.h"

namespace pk {

const char* model_kind_name(ModelKind kind) {
    switch (kind) {
        case ModelKind::None: return "none";
        case ModelKind::Asr: return "ASR";
        case ModelKind::Diarization: return "diarization";
        case ModelKind::Sound: return "sound-event";
        case ModelKind::Speaker: return "speaker";
        case ModelKind::Vad: return "VAD";
    }
    return "unknown";
}

ModelKind detect_model_kind(const GgufReader& gguf) {
    const std::string arch_key = schema::kGeneralArchitecture;
    if (!gguf.has_key(arch_key)) return ModelKind::None;
    std::string arch;
    try {
        arch = gguf.get_string(arch_key);
    } catch (const GgufError&) {
        return ModelKind::None;  // not a string: the loader reports it
    }
    if (arch == schema::kArchitecture) {
        const std::string sub_key = schema::kArch;
        if (gguf.has_key(sub_key)) {
            try {
                if (gguf.get_string(sub_key) == schema::kArchDiarization) return ModelKind::Diarization;
            } catch (const GgufError&) {
            }
        }
        return ModelKind::Asr;
    }
    if (arch == schema::kArchitectureSileroVad) return ModelKind::Vad;
    if (arch == schema::kArchitectureCed) return ModelKind::Sound;
    if (arch == schema::kArchitectureVoicedetect) return ModelKind::Speaker;
    return ModelKind::None;
}

void refuse_other_model_kind(const GgufReader& gguf, ModelKind wanted) {
    const ModelKind kind = detect_model_kind(gguf);
    if (kind == ModelKind::None || kind == wanted) return;
    throw Unsupported(std::string("this file holds a ") + model_kind_name(kind) + " model (general.architecture '" +
                      gguf.get_string(schema::kGeneralArchitecture) + "'); this loader takes " +
                      model_kind_name(wanted) +
                      " models only (parakeet_capi_load chooses the loader by the file's kind)");
}

}  // namespace pk
