#include "model/frontend/audio_input.h"

#include <cmath>
#include <string>

#include "common/errors.h"

namespace pk {
namespace {

constexpr int kMinSampleRate = 1000;
constexpr int kMaxSampleRate = 384000;

}  // namespace

void check_sample_rate(int sample_rate) {
    if (sample_rate < kMinSampleRate || sample_rate > kMaxSampleRate)
        throw InvalidAudio("sample rate " + std::to_string(sample_rate) + " Hz is not supported (" +
                           std::to_string(kMinSampleRate) + " to " + std::to_string(kMaxSampleRate) + " Hz)");
}

std::shared_ptr<const Resampler> AudioInput::resampler_for(int sample_rate) const {
    return resamplers_.get(sample_rate, model_rate_);
}

int64_t AudioInput::resampled_length(const float* samples, int64_t n, int sample_rate) const {
    if (n < 0) throw InvalidArgument("the number of samples is negative (" + std::to_string(n) + ")");
    if (n > 0 && samples == nullptr) throw InvalidArgument("the sample buffer is NULL");
    check_sample_rate(sample_rate);
    return sample_rate == model_rate_ ? n : resampler_for(sample_rate)->output_length(n);
}

const float* AudioInput::prepare(Backend& b, const float* samples, int64_t n, int sample_rate,
                                 int64_t* n_out) const {
    resampled_length(samples, n, sample_rate);
    for (int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(samples[i]))
            throw InvalidAudio("sample " + std::to_string(i) + " is not a finite number (NaN or Inf)");
    }
    if (sample_rate == model_rate_) {
        *n_out = n;
        return samples;
    }
    const std::shared_ptr<const Resampler> r = resampler_for(sample_rate);
    const int64_t m = r->output_length(n);
    float* out = b.arena().alloc_array<float>(static_cast<size_t>(m > 0 ? m : 1));
    r->process(b.team(), samples, n, out);
    *n_out = m;
    return out;
}

}  // namespace pk
