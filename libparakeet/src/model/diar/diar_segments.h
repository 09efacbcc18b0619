// Speaker probabilities -> speaker segments, as NeMo's diarize() post-processes them
// (ts_vad_post_processing: binarization, then filtering; vad_utils.py, NeMo 3.0.0).
//
// Per speaker, each output frame's probability is repeated `units_per_frame` times as 10 ms
// units. A segment opens at the first unit with p > onset and closes at the first later unit
// with p < offset (strict: p equal to a threshold keeps the state); start = unit x 0.01 s -
// pad_onset (at least 0), end = unit x 0.01 s + pad_offset. A segment still open at the end
// closes at the LAST unit's index, 10 ms before the audio's end. Segments that overlap after
// padding are merged; then (NeMo's filter_speech_first) segments shorter than min_duration_on
// are dropped and gaps shorter than min_duration_off are filled. Times are rounded to 10 ms.
// Segment values are float32 as in NeMo's tensors, so the comparisons round as NeMo's do.
#pragma once

#include <cstdint>
#include <vector>

namespace pk {

// NeMo's PostProcessingParams, its defaults.
struct DiarPostProcessing {
    double onset = 0.5;
    double offset = 0.5;
    double pad_onset = 0.0;
    double pad_offset = 0.0;
    double min_duration_on = 0.0;
    double min_duration_off = 0.0;
};

struct DiarSegment {
    int speaker = 0;
    double start = 0.0;  // seconds, a multiple of 0.01
    double end = 0.0;
};

// A float32 time (a segment's, as the C ABI hands them out) back on the 10 ms grid, as double:
// the value the segment had before it was narrowed (k x 0.01 s).
double round_to_diar_unit(float v);

// probs: [frames, n_speakers] row-major. Segments sorted by start, then speaker.
std::vector<DiarSegment> speaker_segments(const float* probs, int64_t frames, int n_speakers, int units_per_frame,
                                          const DiarPostProcessing& post);

}  // namespace pk
