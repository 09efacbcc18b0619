// The options document of parakeet_capi_load_with (the keys are in include/parakeet_capi.h):
//   {"isa": "avx2", "attention": [128, 128], "q8_all": true, "q8_subsampling": false,
//    "bf16": false, "threads": 4, "component": "asr"}
// Strict: an unknown key, a value of the wrong type or out of range is an error saying what was
// wrong, so a typo never silently falls back to a default.
#pragma once

#include "model/load_options.h"

namespace pk::capi {

// Overrides the fields of `options` that `json` names (NULL or "": none). Throws
// InvalidArgument.
void apply_load_options_json(const char* json, LoadOptions& options);

}  // namespace pk::capi
