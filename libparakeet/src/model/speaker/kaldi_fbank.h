// Kaldi filterbank features, the speaker encoders' front end: what
// torchaudio.compliance.kaldi.fbank gives with voice-detect.cpp's settings, followed by
// per-utterance mean removal (CMN).
//
// Recipe (torchaudio/compliance/kaldi.py, dither 0, use_energy false, snip_edges true):
//   1. frames of win_length samples every hop_length: n_frames = 1 + (n - win) / hop when
//      n >= win, else none (snip_edges);
//   2. per frame: subtract the frame's mean (remove_dc_offset), then pre-emphasis
//      y[i] = x[i] - preemph * x[i-1], with x[-1] = x[0] (replicate padding);
//   3. multiply by the povey window (0.5 - 0.5 cos(2 pi i / (win - 1)))^0.85, zero-pad to
//      n_fft (the next power of two), power spectrum |X[k]|^2;
//   4. n_mels triangular filters, equally spaced on the mel scale 1127 ln(1 + f/700) from
//      low_freq to the Nyquist frequency (high_freq <= 0 counts from Nyquist), the Nyquist bin
//      weighted 0; log(max(energy, FLT_EPSILON));
//   5. CMN: each mel bin's mean over the utterance's frames is subtracted.
//
// Output layout: time-major [n_frames, n_mels].
//
// Precision: each frame runs in double from the DC removal to the log (its own radix-2 FFT with
// twiddles computed in double: the real frame as a complex one of half the length, which halves
// the FFT's work), and only the log energies are rounded to float. torchaudio's
// float32 computation itself differs from the exact values by up to 2e-4 on low-energy bins
// (pre-emphasis leaves little below 100 Hz), so a float32 FFT could not promise 1e-4 of the
// exact features; in double the error is the input's and the output's rounding alone.
//
// Threads: frames are split over the team (each frame is one thread's work); the means are
// taken per mel bin by one thread in frame order, in double. The code is plain C++ with no ISA
// variants, so results are bitwise identical for any team size and at every ISA level.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/thread_team.h"

namespace pk {

struct KaldiFbankConfig {
    int sample_rate = 16000;
    int n_mels = 80;
    int win_length = 400;    // 25 ms
    int hop_length = 160;    // 10 ms
    float preemph = 0.97f;
    float low_freq = 20.0f;  // Hz
    float high_freq = 0.0f;  // Hz; <= 0 is an offset from the Nyquist frequency
    bool cmn = true;         // subtract each bin's mean over the utterance
};

class KaldiFbank {
public:
    // Throws std::invalid_argument when the config is unusable (sizes not positive, a window
    // over 65536 samples or over 1024 bins, the mel range empty).
    explicit KaldiFbank(const KaldiFbankConfig& config);

    const KaldiFbankConfig& config() const { return cfg_; }
    // 1 + (n - win_length) / hop_length, or 0 below one window.
    int64_t n_frames(int64_t n_samples) const;

    // Writes n_frames(n_samples) * n_mels floats to out (time-major).
    void compute(ThreadTeam& team, const float* samples, int64_t n_samples, float* out) const;

private:
    // The n_fft / 2-point complex FFT of re + i im, in place.
    void half_fft(double* re, double* im) const;
    // |X[k]|^2 for k <= n_fft / 2 of the real frame x[n_fft] into x[0 .. n_fft / 2], by the
    // half-length complex FFT of z[j] = x[2j] + i x[2j+1] (in z[n_fft]) and the split of its
    // even and odd halves.
    void power_spectrum(double* x, double* z) const;
    // scratch: 2 * n_fft doubles.
    void frame_log_mel(const float* frame, double* scratch, float* row) const;
    // Per-utterance mean removal (cmn): each bin minus its mean over the frames.
    void remove_mean(int64_t n_frames, float* out) const;

    KaldiFbankConfig cfg_;
    int n_fft_ = 0;                  // the power of two at or above win_length
    std::vector<uint32_t> bitrev_;   // n_fft / 2 entries: the half-length FFT's
    std::vector<double> cos_, sin_;  // cos / sin(2 pi k / n_fft), k < n_fft / 2
    std::vector<double> window_;     // win_length povey weights
    std::vector<double> filters_;    // n_mels x (n_fft/2 + 1), row-major
    std::vector<int> first_, end_;   // each filter's non-zero bins [first, end)
};

}  // namespace pk
