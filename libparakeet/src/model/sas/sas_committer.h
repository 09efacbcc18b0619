// SasCommitter: when a speaker-attributed stream transcribes and which words it hands out
// (parakeet.cpp's commit rule for sas_stream, restated):
//
//   - Once at least 4 s of not yet committed audio up to the diarized edge (the time the
//     diarizer has probabilities for) is buffered, that window is transcribed offline.
//   - The words ending at least 1 s before the window's end are committed; the next window
//     starts where the last committed word ends.
//   - If no word commits, the audio up to the first word heard (or, with none, up to that 1 s
//     limit), minus 0.3 s, is released.
//   - A first committed word that repeats the last committed one (same text ignoring case and
//     punctuation, starting within 0.5 s of it) was heard twice across the window cut: dropped.
//   - The last feed commits every word of what remains.
//
// Ours: a window that has grown to 30 s without a commit commits all its words (bounds the
// buffer). Times are seconds on the stream's timeline; the audio is kept only from the window's
// start.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/transcript/transcript.h"

namespace pk {

class SasCommitter {
public:
    // Transcribes n samples, word times relative to the first sample.
    using Transcriber = std::function<std::vector<TranscriptWord>(const float* samples, int64_t n)>;

    static constexpr double kWindowSec = 4.0;
    static constexpr double kHoldSec = 1.0;
    static constexpr double kReleaseBackSec = 0.3;
    static constexpr double kRepeatSec = 0.5;
    static constexpr double kMaxWindowSec = 30.0;

    SasCommitter(int sample_rate, Transcriber transcribe);

    void append(const float* samples, int64_t n);
    // The words that commit now, in order, given the diarized edge (seconds); `last`: all.
    std::vector<TranscriptWord> commit(double diarized_edge_sec, bool last);

    double window_start_sec() const { return static_cast<double>(start_) / rate_; }

private:
    // Drops the audio before sample `s` (>= start_).
    void release_to(int64_t s);

    int rate_;
    Transcriber transcribe_;
    std::vector<float> audio_;  // samples [start_, start_ + audio_.size())
    int64_t start_ = 0;
    bool have_last_ = false;
    TranscriptWord last_;       // the last word committed
    // The window [stalled_start_, stalled_edge_) was transcribed and released nothing (its first
    // word ends within the hold): not transcribed again until the edge moves.
    int64_t stalled_start_ = -1;
    int64_t stalled_edge_ = -1;
};

}  // namespace pk
