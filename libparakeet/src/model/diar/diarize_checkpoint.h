// The probabilities NeMo's diarize() gives for a checkpoint: SortformerEncLabelModel.forward runs
// forward_streaming with the checkpoint's own streaming settings when its config has
// streaming_mode on (no peak scaling then), else the offline network over the whole clip. The
// C ABI's offline diarize_* calls follow it, as parakeet.cpp's do for its streaming checkpoints.
#pragma once

#include <cstdint>

#include "model/diar/diar_model.h"

namespace pk {

// Borrows a backend. `progress` hears the path's reports (DiarModel::probabilities or
// diar_streaming_probabilities). Throws InvalidArgument / InvalidAudio for bad audio,
// Cancelled when `progress` says stop.
SpeakerProbabilities diarize_probabilities(const DiarModel& model, const float* samples, int64_t n, int sample_rate,
                                           const ProgressSpan& progress = {});

}  // namespace pk
