// What a GGUF file holds, told from its keys: an ASR model, a VAD model, a diarization model...
// The C ABI's contexts hold one kind each (parakeet_capi_model_kind) and every entry point
// refuses the wrong one. The values are parakeet.cpp's PARAKEET_MODEL_KIND_*.
#pragma once

#include "model/gguf_reader.h"

namespace pk {

enum class ModelKind : int {
    None = 0,         // not a model kind this schema knows
    Asr = 1,          // general.architecture "parakeet" (any parakeet.arch but "diarization")
    Diarization = 2,  // "parakeet" with parakeet.arch "diarization" (Sortformer)
    Sound = 3,        // "ced" (a sound-event tagger)
    Speaker = 4,      // "voicedetect" (a speaker encoder)
    Vad = 5,          // "silero_vad"
};

// "none", "ASR", "diarization", "sound-event", "speaker" or "VAD": for messages such as
// "this context holds a VAD model".
const char* model_kind_name(ModelKind kind);

// The kind of model in `gguf`, from general.architecture (and parakeet.arch). None when the
// file names no architecture or one no loader knows.
ModelKind detect_model_kind(const GgufReader& gguf);

// Throws Unsupported when `gguf` holds a model of a known kind other than `wanted`, naming
// what it holds. A file of no known kind passes: its loader says what is wrong with it.
void refuse_other_model_kind(const GgufReader& gguf, ModelKind wanted);

}  // namespace pk
