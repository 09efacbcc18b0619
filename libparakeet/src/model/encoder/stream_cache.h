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
    // The last `frames` (<= L) frames' K and V in buffers with room to spare, in the layouts the
    // attention reads: keys transposed, [d_model, capacity] (kernels::TransposedKeys: frame f in
    // column f of every channel's row), values [capacity - kColumnPad, d_model] (the keys'
    // last kernels::local_attention::kColumnPad columns are room the products read past them). The live frames are
    // [first, first + frames). A step writes its own frames right after them and the attention
    // reads them where they lie; the window then slides forward, and the live frames move back
    // to 0 only when the room runs out (every few steps), so a step copies its new frames, not
    // the whole cache. Columns past the live ones hold finite values (the products read a
    // little past the keys).
    std::vector<float> keys_t, values;
    int64_t capacity = 0, first = 0, frames = 0;
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
