// The options_json of the VAD calls (docs/vad.md): a strict reader, unknown keys and values out
// of range are InvalidArgument.
#pragma once

#include "model/vad/vad_options.h"

namespace pk::capi {

VadOptions parse_vad_options(const char* json);

}  // namespace pk::capi
