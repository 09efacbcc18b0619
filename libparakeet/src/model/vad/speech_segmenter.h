// Speech segments from per-frame probabilities, exactly as Silero's get_speech_timestamps
// (silero-vad 6.2.3, use_max_poss_sil_at_max_speech = True) computes them: hysteresis between
// threshold and neg_threshold, min_silence before an end, min_speech to keep a segment, the
// max-speech cut at the longest silence seen, then the padding pass.
//
// Incremental: push() one frame at a time, finish() at the end of the audio. The segments it
// has closed and kept are final as they stand (raw, before padding); pad_segment() pads one
// given its neighbours, which the stream uses to emit start/end events as soon as they are
// certain. One-shot callers take padded() after finish().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/vad/vad_options.h"

namespace pk {

struct SampleSpan {
    int64_t start = 0, end = 0;  // samples at the model rate
};

class SpeechSegmenter {
public:
    explicit SpeechSegmenter(const SegmenterParams& p) : p_(p) {}

    void push(float prob);
    // Closes an open segment at audio_length (kept if longer than min_speech).
    void finish(int64_t audio_length);

    const SegmenterParams& params() const { return p_; }
    int64_t frames() const { return frames_; }
    // Kept segments, raw (unpadded), in order.
    const std::vector<SampleSpan>& raw() const { return speeches_; }
    bool open() const { return triggered_ && has_start_; }
    int64_t open_start() const { return start_; }
    // Whether the open segment will be kept whatever follows: a frame at or above threshold
    // lies far enough past its start (every ending keeps it then).
    bool open_certain() const;

    // Silero's padding of raw segment i: `next_start` is the raw start of the next kept
    // segment (< 0 when there is none: the end is padded up to audio_length).
    int64_t padded_start(size_t i) const;
    int64_t padded_end(size_t i, int64_t next_start, int64_t audio_length) const;
    // Every kept segment padded (after finish()).
    std::vector<SampleSpan> padded(int64_t audio_length) const;

private:
    void close_at(int64_t end, bool check_length);

    SegmenterParams p_;
    int64_t frames_ = 0;
    bool triggered_ = false;
    bool has_start_ = false;  // current_speech holds a start
    int64_t start_ = 0;
    int64_t temp_end_ = 0;    // 0 means none, as in Silero (a falsy 0)
    int64_t prev_end_ = 0, next_start_ = 0;
    std::vector<std::pair<int64_t, int64_t>> possible_ends_;  // (temp_end, silence length)
    int64_t last_speech_frame_ = -1;  // start sample of the latest frame >= threshold
    std::vector<SampleSpan> speeches_;
};

}  // namespace pk
