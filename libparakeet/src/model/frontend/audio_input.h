// AudioInput: a request's audio checked (length, buffer, rate, finite samples) and brought to
// the model's sample rate, for every model kind that takes PCM (ASR, diarization).
#pragma once

#include <cstdint>
#include <memory>

#include "model/frontend/resampler_cache.h"
#include "runtime/backend.h"

namespace pk {

// InvalidAudio unless `sample_rate` is one the models take (1000 to 384000 Hz, resampled).
void check_sample_rate(int sample_rate);

class AudioInput {
public:
    explicit AudioInput(int model_rate) : model_rate_(model_rate) {}

    int model_rate() const { return model_rate_; }

    // Checks the length, buffer and sample rate (InvalidArgument / InvalidAudio) and returns
    // the length at the model's rate.
    int64_t resampled_length(const float* samples, int64_t n, int sample_rate) const;
    // Checks the audio as above and that every sample is finite (InvalidAudio), and returns it
    // at the model's rate: `samples` itself, or a copy in b's arena. *n_out is its length.
    const float* prepare(Backend& b, const float* samples, int64_t n, int sample_rate, int64_t* n_out) const;

private:
    std::shared_ptr<const Resampler> resampler_for(int sample_rate) const;

    int model_rate_;
    // Resamplers by input rate, built on first use; only the most recently used are kept.
    mutable ResamplerCache resamplers_;
};

}  // namespace pk
