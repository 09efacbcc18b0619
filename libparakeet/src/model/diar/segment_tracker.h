// DiarSegmentTracker: NeMo's binarisation of speaker probabilities into segments
// (vad_utils.binarization as ts_vad_post_processing calls it, no padding), done incrementally
// for streams: each output frame stands for `upsample` 10 ms units; per speaker a segment opens
// at the first unit with p > onset and closes at the first later unit with p < offset (p equal
// to a threshold keeps the state); times are unit index x 0.01 s rounded to 2 decimals, as
// NeMo's predlist_to_timestamps rounds them. At the end a segment still open closes at the index
// of the last unit (NeMo's quirk: 10 ms before the end of the last frame).
//
// A segment is final once closed, so a stream can hand it out at once: this is the whole
// post-processing for NeMo's defaults (no padding, no duration filters).
#pragma once

#include <cstdint>
#include <vector>

#include "model/diar/diar_segments.h"

namespace pk {

class DiarSegmentTracker {
public:
    DiarSegmentTracker(int n_spk, int upsample, float onset, float offset);

    // The probabilities of the next n frames ([n, n_spk]); the segments they close are appended
    // to `closed`, by start then speaker.
    void push(const float* probs, int64_t n, std::vector<DiarSegment>& closed);
    // Closes the open segments at the last unit (nothing to close before any frame).
    void finish(std::vector<DiarSegment>& closed);
    // The open segments, ending at the time diarized so far.
    std::vector<DiarSegment> active() const;

    int64_t frames() const { return frames_; }

private:
    int n_spk_, upsample_;
    float onset_, offset_;
    int64_t frames_ = 0;
    std::vector<char> speech_;      // per speaker
    std::vector<int64_t> start_;    // per speaker, the open segment's first unit
};

}  // namespace pk
