// What a cache-aware encoder carries from one streaming step to the next (NeMo's
// cache_last_channel, cache_last_time and cache_last_channel_len), per conformer layer.
//
// NeMo keeps the last L layer-normed attention inputs and recomputes their keys and values at
// every step; the engine keeps the keys and values themselves. Both are the same numbers: a
// projection's row depends only on that row (layers/linear.h), so a frame's key is the same
// whether it is computed with its chunk or again later. The zero-filled, masked part of NeMo's
// cache (cache_last_channel_len < L at the start) is simply not stored.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/model_config.h"

namespace pk {

struct LayerStreamCache {
    // [rows, d_model] each, with room to spare: rows [first, first + frames) hold the last
    // `frames` (<= L) frames' K and V. A step writes its own frames' rows right after them and
    // the attention reads the keys where they lie; the window then slides forward, and the live
    // rows are moved back to row 0 only when the room runs out (every few steps), so a step
    // copies its new rows, not the whole cache.
    std::vector<float> keys, values;
    int64_t first = 0, frames = 0;
    std::vector<float> conv;  // [kernel - 1, d_model]: the depthwise conv's last inputs (zero at start)
    // linear_pos of positions L+R .. -R as the attention reads them (kernels::
    // transpose_positions): the same for every stream of a context, so made once per model and
    // context and shared (FastConformerEncoder::stream_steps).
    std::shared_ptr<const std::vector<float>> positions;
};

struct EncoderStreamCache {
    AttContext context;
    std::vector<LayerStreamCache> layers;
};

// One stream's part of a batched encoder step (FastConformerEncoder::stream_steps).
struct EncoderStep {
    const float* mel = nullptr;  // [mel_frames, n_mels]: the pre-encode cache, then the chunk
    int64_t mel_frames = 0;
    int64_t drop = 0;            // subsampled frames dropped in front (drop_extra_pre_encoded)
    EncoderStreamCache* cache = nullptr;
    int64_t frames = 0;          // set by the step: the encoder frames it gave,
    int64_t row = 0;             //   from this row of the step's output on
};

}  // namespace pk
