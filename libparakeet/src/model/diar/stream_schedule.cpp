#include "model/diar/stream_schedule.h"

#include <algorithm>

namespace pk {

DiarChunkWindow diar_chunk_window(const DiarStreamingParams& p, int subsampling, int64_t index, int64_t feat_len) {
    const int64_t f = subsampling, step = f * p.chunk_len;
    DiarChunkWindow w;
    w.chunk_begin = step * index;
    w.chunk_end = std::min(w.chunk_begin + step, feat_len);
    const int64_t left = std::min<int64_t>(f * p.chunk_left_context, w.chunk_begin);
    const int64_t right = std::min<int64_t>(f * p.chunk_right_context, feat_len - w.chunk_end);
    w.begin = w.chunk_begin - left;
    w.end = w.chunk_end + right;
    // left is a multiple of f except at the start, where it is 0, so Python's round() is exact.
    w.lc = static_cast<int>(left / f);
    w.rc = static_cast<int>((right + f - 1) / f);
    return w;
}

int64_t diar_chunk_count(const DiarStreamingParams& p, int subsampling, int64_t feat_len) {
    const int64_t step = static_cast<int64_t>(subsampling) * p.chunk_len;
    return feat_len <= 0 ? 0 : (feat_len + step - 1) / step;
}

int64_t diar_full_window_end(const DiarStreamingParams& p, int subsampling, int64_t index) {
    const int64_t f = subsampling;
    return f * p.chunk_len * (index + 1) + f * p.chunk_right_context;
}

}  // namespace pk
