// The options document of parakeet_capi_stream_begin_with: a flat JSON object,
//   {"chunk_sec": 2, "left_sec": 10, "right_sec": 2, "decoder": 0}   (offline models)
//   {"att_context": [70, 1], "decoder": 0}                           (cache-aware models)
//   {"language": "de-DE"}                       (prompt models; other models ignore it)
// Strict: anything else (unknown keys, wrong types, nesting, trailing text) is an error that says
// what was wrong, so a typo in a key never silently falls back to a default.
#pragma once

#include <optional>
#include <string>

#include "model/model_config.h"
#include "model/stream/stream_settings.h"

namespace pk::capi {

struct StreamOptions {
    StreamSettings settings;           // the windows (offline models) and the decoder
    bool has_window = false;           // chunk_sec, left_sec or right_sec given
    std::optional<AttContext> att_context;  // cache-aware models: one of the model's contexts
    std::string language;              // prompt models: the locale (empty: the model's default)
};

// NULL or "" (only white space): the defaults. Throws InvalidArgument.
StreamOptions parse_stream_options(const char* json);

}  // namespace pk::capi
