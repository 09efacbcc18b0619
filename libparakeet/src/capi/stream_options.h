// The options document of parakeet_capi_stream_begin_with: a flat JSON object of numbers,
//   {"chunk_sec": 2, "left_sec": 10, "right_sec": 2, "decoder": 0}
// Strict: anything else (unknown keys, strings, nesting, trailing text) is an error that says
// what was wrong, so a typo in a key never silently falls back to a default.
#pragma once

#include "model/stream/stream_settings.h"

namespace pk::capi {

// NULL or "" (only white space): the defaults. Throws InvalidArgument.
StreamSettings parse_stream_options(const char* json);

}  // namespace pk::capi
