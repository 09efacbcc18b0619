// The options of parakeet_capi_diarize_pcm_with: a JSON object (NULL or "" means {}).
#pragma once

#include "model/diar/diar_segments.h"

namespace pk::capi {

struct DiarOptions {
    bool probabilities = false;   // add frame_sec and one probability row per speaker
    DiarPostProcessing post;      // NeMo's PostProcessingParams (onset/offset default to the file's)
};

// Parses `json` over `defaults` (the model's onset and offset). Unknown keys, wrong types and
// out-of-range values are InvalidArgument; "streaming" is Unsupported (not yet implemented).
DiarOptions parse_diar_options(const char* json, const DiarOptions& defaults);

}  // namespace pk::capi
