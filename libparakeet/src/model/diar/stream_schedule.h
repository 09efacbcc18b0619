// The chunks of Sortformer's streaming inference over a clip's mel frames, as NeMo 3.0.0's
// SortformerModules.streaming_feat_loader cuts them: chunk i covers mel frames
// [f*chunk_len*i, f*chunk_len*(i+1)) (f = the subsampling factor, 8), clipped at the clip's end,
// with up to f*chunk_left_context frames before it (fewer only at the start) and up to
// f*chunk_right_context after it (fewer near the end). forward_streaming_step drops
// round(left/f) pre-encode frames at the front and ceil(right/f) at the back of its output.
#pragma once

#include <cstdint>

#include "model/diar/streaming_params.h"

namespace pk {

struct DiarChunkWindow {
    int64_t begin = 0, end = 0;              // mel frames given to pre_encode, contexts included
    int64_t chunk_begin = 0, chunk_end = 0;  // the chunk's own frames
    int lc = 0, rc = 0;                      // pre-encode frames of left / right context
};

// Chunk `index` of a clip of `feat_len` valid mel frames (index < diar_chunk_count).
DiarChunkWindow diar_chunk_window(const DiarStreamingParams& p, int subsampling, int64_t index, int64_t feat_len);

// Chunks of a clip of feat_len mel frames: ceil(feat_len / (f * chunk_len)); 0 for no frames.
int64_t diar_chunk_count(const DiarStreamingParams& p, int subsampling, int64_t feat_len);

// The window of chunk `index` of a clip known to have at least `end` frames, where `end` is that
// window's own end: the frames up to which a live stream must have its mel before it can run
// the chunk without knowing where the clip ends (f*chunk_len*(index+1) + f*chunk_right_context).
int64_t diar_full_window_end(const DiarStreamingParams& p, int subsampling, int64_t index);

}  // namespace pk
