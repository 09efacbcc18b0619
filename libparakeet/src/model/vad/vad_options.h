// The options of a VAD request or stream (the C ABI's options_json, docs/vad.md), in seconds,
// and the segmenter's parameters they give at a model rate, in samples.
#pragma once

#include <cstdint>
#include <limits>

namespace pk {

enum class VadMode { Speech, Segments };

struct VadOptions {
    double threshold = 0.5;        // a frame at or above starts (or keeps) speech
    double neg_threshold = -1.0;   // below it, speech may end; < 0: max(threshold - 0.15, 0.01)
    double min_speech = 0.25;      // shorter segments are dropped (Silero's min_speech_duration_ms)
    double min_pause = 0.1;        // silence that ends a segment (min_silence_duration_ms)
    double speech_pad = 0.03;      // padding on each side (speech_pad_ms)
    double max_segment = -1.0;     // < 0: the mode's default (speech: no limit; segments: 30 s)
    VadMode mode = VadMode::Speech;
    bool probabilities = false;    // include the per-frame probabilities in the result

    double effective_neg_threshold() const {
        return neg_threshold >= 0 ? neg_threshold : (threshold - 0.15 > 0.01 ? threshold - 0.15 : 0.01);
    }
    double effective_max_segment() const {
        if (max_segment > 0) return max_segment;
        return mode == VadMode::Segments ? 30.0 : std::numeric_limits<double>::infinity();
    }
};

// get_speech_timestamps' parameters in samples at the model rate, computed as Silero does
// (sampling_rate * milliseconds / 1000, as doubles).
struct SegmenterParams {
    int window = 512;  // samples per frame
    double threshold = 0.5, neg_threshold = 0.35;
    double min_speech = 4000, min_silence = 1600, pad = 480;
    double max_speech = std::numeric_limits<double>::infinity();
    double min_silence_at_max_speech = 1568;  // Silero's fixed 98 ms

    static SegmenterParams from(const VadOptions& o, int sample_rate, int window);
};

}  // namespace pk
