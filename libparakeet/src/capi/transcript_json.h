// The JSON document of a transcript, in the shape parakeet.cpp's C API returns (extra fields
// "duration", a token's "dur" and "attention" are ours).
#pragma once

#include <string>

#include "model/transcript.h"

namespace pk::capi {

// {"text", "frame_sec", "duration", "words": [{"w","start","end","conf"}],
//  "tokens": [{"id","t","conf","dur"}], "attention": {"mode", ["left", "right"]}}
std::string transcript_to_json(const Transcript& t, double audio_seconds);

}  // namespace pk::capi
