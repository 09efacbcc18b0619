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
#include <vector>

#include "model/model_config.h"

namespace pk {

struct LayerStreamCache {
    std::vector<float> keys, values;  // [frames, d_model]: the last `frames` (<= L) frames' K and V
    int64_t frames = 0;
    std::vector<float> conv;  // [kernel - 1, d_model]: the depthwise conv's last inputs (zero at start)
    std::vector<float> positions;  // linear_pos of positions L+R .. -R, made once, as the attention
                                   // reads them (kernels::transpose_positions)
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
