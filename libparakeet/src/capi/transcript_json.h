// The JSON document of a transcript, in the shape parakeet.cpp's C API returns (extra fields
// "duration", a token's "dur" and "attention" are ours).
#pragma once

#include <string>
#include <vector>

#include "common/json_writer.h"
#include "model/transcript/transcript.h"

namespace pk::capi {

// {"text", "frame_sec", "duration", "words": [{"w","start","end","conf"}],
//  "tokens": [{"id","t","conf","dur"}], "attention": {"mode", ["left", "right"]}}
std::string transcript_to_json(const Transcript& t, double audio_seconds);

// The "words" and "tokens" arrays of that document (also in the stream documents).
void write_words(JsonWriter& j, const std::vector<TranscriptWord>& words);
void write_tokens(JsonWriter& j, const std::vector<TranscriptToken>& tokens, double frame_sec);
// One token's keys of the transcript document ("id", "t", "conf", "dur") into an open object.
void write_token_fields(JsonWriter& j, const TranscriptToken& token, double frame_sec);

}  // namespace pk::capi
