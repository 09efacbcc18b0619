// ChunkSchedule: which audio window each chunk of a stream encodes and which of its encoder
// frames are decoded — NeMo's StreamingBatchedAudioBuffer / ContextSize rules, as pure
// arithmetic on sample counts (no audio, no model), so they are tested on their own.
//
// With L, C, R the contexts in samples and N the stream's length: chunk 0 ends at
// end_0 = min(C + R, N), chunk i+1 at end_{i+1} = min(end_i + C, N); the window of chunk i is
// [max(0, end_i - (L + C + R)), end_i). A chunk whose end is below N decodes C / frame
// encoder frames after its left context (left = min(end_i - C - R, L) samples); the chunk
// that reaches N (the last) decodes every frame of its window after
// floor((chunk start - window start) / frame) frames, its chunk starting where the previous
// chunk's right context began (end_{i-1} - R), or at 0. Because a chunk is "last" only once N
// is known, a chunk that is not the last is run only when audio beyond its end has arrived.
#pragma once

#include <cstdint>
#include <optional>

#include "model/stream/stream_settings.h"

namespace pk {

struct ChunkWindow {
    int64_t window_start = 0;  // samples, from the start of the stream
    int64_t window_end = 0;
    int64_t left_frames = 0;   // encoder frames of the window before the decoded ones
    // Frames decoded after left_frames; -1 for the last chunk: all the window's frames after
    // left_frames (the window's encoder length depends on its mel length).
    int64_t decode_frames = 0;
    bool last = false;
};

class ChunkSchedule {
public:
    explicit ChunkSchedule(const StreamContext& ctx) : ctx_(ctx) {}

    // The next chunk to run given `received` samples so far, or nothing while it must wait
    // for more audio. With `final` set (no audio will follow), the chunk reaching the end is
    // returned as the last; after it, nothing.
    std::optional<ChunkWindow> next(int64_t received, bool final) const;
    // Marks the chunk next() returned as run.
    void advance(const ChunkWindow& w);

    int64_t chunks_run() const { return chunks_run_; }
    bool done() const { return done_; }
    // Samples that the next window can still need: audio before this may be dropped.
    int64_t keep_from(int64_t received) const;

private:
    StreamContext ctx_;
    int64_t end_ = 0;       // end of the last chunk run (0 before the first)
    int64_t chunks_run_ = 0;
    bool done_ = false;
};

}  // namespace pk
