// The options of parakeet_capi_diarize_pcm_with: a JSON object (NULL or "" means {}).
#pragma once

#include <optional>

#include "model/diar/diar_model.h"
#include "model/diar/diar_segments.h"
#include "model/diar/streaming_params.h"

namespace pk::capi {

struct DiarOptions {
    bool probabilities = false;   // add frame_sec and one probability row per speaker
    DiarPostProcessing post;      // NeMo's PostProcessingParams (onset/offset default to the file's)
    // "streaming": NeMo's forward_streaming with these settings instead of what diarize() runs
    // for the checkpoint (capi/diar_streaming_option.h).
    std::optional<DiarStreamingParams> streaming;
};

// Parses `json` over `defaults` (the model's onset and offset); "streaming" starts from `model`'s
// own streaming settings. Unknown keys, wrong types and out-of-range values are InvalidArgument.
DiarOptions parse_diar_options(const char* json, const DiarOptions& defaults, const DiarModel& model);

}  // namespace pk::capi
