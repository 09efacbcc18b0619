// The "streaming" option of parakeet_capi_diarize_pcm_with: an object of NeMo's names, in
// 80 ms frames, over the checkpoint's own streaming parameters:
//   {"chunk_len", "chunk_right_context", "chunk_left_context", "fifo_len", "spkcache_len",
//    "spkcache_update_period"}
// (any subset; {} is the checkpoint's configuration). With it, diarize_pcm_with runs NeMo's
// forward_streaming (diar_streaming_probabilities) instead of the offline diarize().
#pragma once

#include "capi/json_scanner.h"
#include "model/diar/diar_model.h"
#include "model/diar/streaming_params.h"

namespace pk::capi {

// Reads the option's value (the object) from `in`. Unknown keys, non-integers and values NeMo's
// _check_streaming_parameters rejects are InvalidArgument.
DiarStreamingParams parse_diar_streaming_option(JsonScanner& in, const DiarModel& model);

}  // namespace pk::capi
