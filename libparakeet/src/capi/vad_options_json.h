// The options_json of the VAD calls (docs/vad.md): a strict reader, unknown keys and values out
// of range are InvalidArgument.
#pragma once

#include <string>

#include "model/vad/vad_options.h"

namespace pk::capi {

// `language`, when given, also accepts a "language" key (the VAD-cut transcription calls: the
// locale of a prompt model's pieces) and receives its value; the VAD calls pass none.
VadOptions parse_vad_options(const char* json, std::string* language = nullptr);

}  // namespace pk::capi
