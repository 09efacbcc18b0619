// Resampler: converts mono float audio at any integer sample rate to another (16 kHz for the
// models), for the C entry points that take WAV files or PCM at other rates. (The Python
// binding resamples with soxr before it reaches the library.)
//
// Method: band-limited interpolation with a Kaiser-windowed sinc, evaluated as a polyphase
// filter. With out/in = up/down in lowest terms, output sample j sits at input time
// t = j*down/up, and y[j] = sum_i x[i] * g(t - i), where g is a lowpass with its cutoff at
// 0.95 x the lower Nyquist frequency: passband edge 0.90 x, stopband from 1.00 x that Nyquist,
// designed for 90 dB stopband attenuation (Kaiser beta 8.96). Downsampling to 16 kHz thus
// keeps 0..7.2 kHz flat and removes everything at or above 8 kHz before it can alias;
// upsampling removes the images above the input's Nyquist. Samples outside the input count as
// zero, and the filter is centred (no delay): output sample 0 is input sample 0.
//
// The filter is tabulated once per phase (up phases, when up <= 1024); for rarer rate pairs
// with more phases, 1024 phases are tabulated and linearly interpolated, which keeps the
// tap error near 1e-6. Measured (tests/cpp/test_resample.cpp, rates 8 k .. 96 k into 16 k):
// passband gain within 0.0002 dB from 100 Hz to 7 kHz, distortion and error against the ideal
// tone below -97 dB; tones from 8 kHz up (48/44.1/22.05 kHz inputs) come out at -92 dB or
// lower; upsampling images below -107 dB. The band 7.2..8 kHz is the transition band.
//
// Output samples are independent of each other and split over the team by range, so results
// are bitwise identical for any team size.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/thread_team.h"

namespace pk {

class Resampler {
public:
    // Rates in Hz, both positive. Throws std::invalid_argument otherwise.
    explicit Resampler(int in_rate, int out_rate = 16000);

    int in_rate() const { return in_rate_; }
    int out_rate() const { return out_rate_; }

    // Output samples for n_in input samples: ceil(n_in * out_rate / in_rate), i.e. every
    // output instant inside the input's duration. 0 for n_in <= 0.
    int64_t output_length(int64_t n_in) const;

    // Writes output_length(n_in) samples to out. With equal rates this is a plain copy.
    void process(ThreadTeam& team, const float* in, int64_t n_in, float* out) const;

private:
    float output_sample(const float* in, int64_t n_in, int64_t j) const;

    int in_rate_, out_rate_;
    int64_t up_, down_;       // out_rate / in_rate in lowest terms
    int phases_;              // tabulated phases: up_, or kMaxPhases when up_ is larger
    bool interpolate_;        // phases_ != up_: interpolate between neighbouring phases
    int taps_;                // taps per phase, a multiple of 8
    std::vector<float> table_;  // (phases_ + 1) x taps_; row r is g at phase r / phases_
};

}  // namespace pk
