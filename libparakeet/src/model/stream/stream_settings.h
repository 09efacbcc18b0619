// StreamSettings: the latency of a chunked stream (NeMo's left / chunk / right context in
// seconds) and the sizes it comes to in encoder frames and audio samples.
#pragma once

#include <cstdint>

#include "model/model_config.h"
#include "model/request_options.h"

namespace pk {

struct StreamSettings {
    double left_sec = 10.0;   // audio before the chunk the encoder sees
    double chunk_sec = 2.0;   // audio decoded per step
    double right_sec = 2.0;   // audio after the chunk the encoder sees (the look-ahead)
    DecoderChoice decoder = DecoderChoice::Default;
};

// The contexts in samples. NeMo (speech_to_text_streaming_infer_rnnt.py) truncates each
// duration to whole encoder frames, frames = int(sec * features_per_sec / subsampling), and an
// encoder frame is make_divisible(int(sample_rate * window_stride), subsampling) * subsampling
// samples: 1 s is 12 frames (15360 samples), 5 s is 62.
struct StreamContext {
    int64_t frame_samples = 0;  // audio samples per encoder frame (1280)
    int64_t left = 0;           // samples
    int64_t chunk = 0;          // samples, >= frame_samples
    int64_t right = 0;          // samples
    int64_t window() const { return left + chunk + right; }
};

// Throws InvalidArgument for a chunk under one encoder frame, negative contexts, or any context
// above kMaxStreamContextSec.
StreamContext stream_context(const StreamSettings& s, const PreprocessorConfig& pre, int subsampling_factor);

constexpr double kMaxStreamContextSec = 600.0;

}  // namespace pk
