// The diarization stream's latency presets, numbered as parakeet.cpp's ABI 7 numbers them
// (PARAKEET_DIAR_LATENCY_*). Latency = (chunk_len + chunk_right_context) x 80 ms.
//
//   0 MODEL      the checkpoint's own streaming parameters
//   1 LOW        1.04 s: chunk 6, right context 7   (NeMo's model card, "low")
//   2 VERY_LOW   0.64 s: chunk 6, right context 2   (parakeet.cpp's; not on NeMo's card)
//   3 ULTRA_LOW  0.32 s: chunk 3, right context 1   (NeMo's card, "ultra low")
//
// The presets other than MODEL take the rest from NeMo's card for
// diar_streaming_sortformer_4spk-v2: fifo_len 188, spkcache_len 188, spkcache_update_period
// 144, and keep the checkpoint's left context, silence slots and score parameters.
// parakeet.cpp's own table (chunk 9 + 4 for LOW, cache and FIFO 264, period 222) is tuned to
// its 8-speaker model; the latencies are the same.
#pragma once

#include "model/diar/streaming_params.h"

namespace pk {

enum class DiarLatency : int { Model = 0, Low = 1, VeryLow = 2, UltraLow = 3 };

// The parameters of preset `mode` for a checkpoint whose own are `model`. Throws
// InvalidArgument "unknown diarization latency mode N" outside 0..3.
DiarStreamingParams diar_latency_preset(int mode, const DiarStreamingParams& model);

}  // namespace pk
