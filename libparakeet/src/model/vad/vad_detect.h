// One-shot voice activity detection over a whole recording: Silero's probabilities and
// get_speech_timestamps' segments (speech mode), or pieces of at most max_segment seconds cut
// at pauses (segments mode: consecutive speech segments merged while they fit).
#pragma once

#include <cstdint>
#include <vector>

#include "model/request_progress.h"
#include "model/vad/silero_model.h"
#include "model/vad/vad_options.h"
#include "runtime/thread_team.h"

namespace pk {

struct VadSegment {
    double start = 0, end = 0;  // seconds
};

struct VadResult {
    int model_rate = 16000;  // the branch that ran
    double duration = 0;     // seconds of input
    double frame_sec = 0.032;
    std::vector<float> probabilities;
    std::vector<VadSegment> segments;
};

// `sample_rate`: 16000 or 8000 natively; a multiple of 16000 is decimated by taking every k-th
// sample, as Silero does; anything else is InvalidAudio (resample first).
// `team` (optional): threads for the chunks' features (VadStream::feed); the result is the same.
// `progress` (optional): reported before each block of the audio (a cancel throws Cancelled).
VadResult detect_speech(const SileroVad& model, const float* pcm, int64_t n, int sample_rate,
                        const VadOptions& options, ThreadTeam* team = nullptr, const ProgressSpan& progress = {});

}  // namespace pk
