// The segments a diarization context gives for a clip with its default settings: what
// parakeet_capi_diarize_pcm returns, for the calls that attribute words to speakers.
#pragma once

#include <cstdint>
#include <vector>

#include "model/diar/diar_model.h"
#include "model/diar/diar_segments.h"
#include "model/request_progress.h"

namespace pk::capi {

// NeMo's post-processing at the file's onset/offset thresholds, no padding or filters.
// `progress` hears the diarization's reports (diarize_checkpoint.h) and may cancel it.
std::vector<DiarSegment> default_segments(const DiarModel& m, const float* samples, int64_t n, int sample_rate,
                                          const ProgressSpan& progress = {});

}  // namespace pk::capi
