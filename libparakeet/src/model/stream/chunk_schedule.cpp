#include "model/stream/chunk_schedule.h"

#include <algorithm>

namespace pk {

std::optional<ChunkWindow> ChunkSchedule::next(int64_t received, bool final) const {
    if (done_) return std::nullopt;
    const int64_t end = chunks_run_ == 0 ? ctx_.chunk + ctx_.right : end_ + ctx_.chunk;
    ChunkWindow w;
    if (end < received) {  // audio beyond the end exists: not the last chunk
        const int64_t left = std::min(end - ctx_.chunk - ctx_.right, ctx_.left);
        w.window_end = end;
        w.window_start = end - ctx_.right - ctx_.chunk - left;
        w.left_frames = left / ctx_.frame_samples;
        w.decode_frames = ctx_.chunk / ctx_.frame_samples;
        return w;
    }
    if (!final || received == 0) return std::nullopt;
    // The last chunk: from where the previous chunk's right context began to the end, in the
    // window of the stream's last L + C + R samples.
    const int64_t chunk_start = chunks_run_ == 0 ? 0 : end_ - ctx_.right;
    w.window_end = received;
    w.window_start = std::max<int64_t>(0, received - ctx_.window());
    w.left_frames = (chunk_start - w.window_start) / ctx_.frame_samples;
    w.decode_frames = -1;
    w.last = true;
    return w;
}

void ChunkSchedule::advance(const ChunkWindow& w) {
    end_ = w.window_end;
    ++chunks_run_;
    if (w.last) done_ = true;
}

int64_t ChunkSchedule::keep_from(int64_t received) const {
    // Every later window is the newest L + C + R samples at its end, which is >= received.
    return std::max<int64_t>(0, received - ctx_.window());
}

}  // namespace pk
