#include "model/stream/stream_settings.h"

#include <cmath>
#include <string>

#include "common/errors.h"

namespace pk {
namespace {

void check_seconds(const char* name, double sec) {
    if (!std::isfinite(sec) || sec < 0.0 || sec > kMaxStreamContextSec)
        throw InvalidArgument(std::string("stream ") + name + " must be between 0 and " +
                           std::to_string(static_cast<int>(kMaxStreamContextSec)) + " seconds (got " +
                           std::to_string(sec) + ")");
}

}  // namespace

StreamContext stream_context(const StreamSettings& s, const PreprocessorConfig& pre, int subsampling_factor) {
    check_seconds("left context", s.left_sec);
    check_seconds("chunk", s.chunk_sec);
    check_seconds("right context", s.right_sec);
    // NeMo: features_per_sec = 1 / window_stride; frames = int(sec * features_per_sec / subsampling).
    const double window_stride = static_cast<double>(pre.hop_length) / pre.sample_rate;
    const double features_per_sec = 1.0 / window_stride;
    const auto frames = [&](double sec) {
        return static_cast<int64_t>(sec * features_per_sec / subsampling_factor);
    };
    StreamContext c;
    // make_divisible_by(int(sample_rate * window_stride), subsampling) samples per mel frame.
    const int64_t hop = static_cast<int64_t>(pre.sample_rate * window_stride);
    c.frame_samples = (hop / subsampling_factor) * subsampling_factor * subsampling_factor;
    c.left = frames(s.left_sec) * c.frame_samples;
    c.chunk = frames(s.chunk_sec) * c.frame_samples;
    c.right = frames(s.right_sec) * c.frame_samples;
    if (c.chunk <= 0)
        throw InvalidArgument("stream chunk of " + std::to_string(s.chunk_sec) +
                           " s is shorter than one encoder frame (" +
                           std::to_string(static_cast<double>(c.frame_samples) / pre.sample_rate) + " s)");
    return c;
}

}  // namespace pk
