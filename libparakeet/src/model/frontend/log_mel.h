// Log-mel front end: the features NeMo's FilterbankFeatures (eval mode) gives the encoder.
//
// Recipe (checked against nemo/collections/asr/parts/preprocessing/features.py of
// nemo-toolkit 3.0.0), for L samples at sample_rate:
//   1. pre-emphasis y[0] = x[0], y[i] = x[i] - preemph * x[i-1] (float32 multiply, then
//      subtract). NeMo zeroes samples at or past the length afterwards; for one unpadded signal
//      that is none. Dither is a training-only step and is not applied.
//   2. torch.stft(center=True, pad_mode="constant"): y is zero-padded by n_fft/2 on both sides,
//      frame t covers padded[t*hop, t*hop + n_fft), and the win_length window is zero-padded
//      centrally to n_fft (left pad (n_fft - win_length)/2). n_frames = 1 + L / hop.
//   3. magnitude sqrt(re^2 + im^2), then raised to mag_power (2: squared) — done in that order
//      in float32 like NeMo, rather than re^2 + im^2 directly, so the rounding matches.
//   4. mel = fb · power (fb is [n_mels, n_fft/2+1]; summed in double over each filter's
//      non-zero span, then rounded to float); log(mel + log_zero_guard) in float.
//   5. valid frames = (L + 2*(n_fft/2) - n_fft) / hop (= L / hop; FilterbankFeatures.get_seq_len,
//      exact_pad false). 160000 samples -> 1001 frames, 1000 valid.
//   6. normalize_per_feature: per mel bin, mean and unbiased std (N-1) over the valid frames;
//      std is 0 when only one frame is valid (NeMo turns that NaN into 0); x = (x - mean) /
//      (std + 1e-5), a true division in float32.
//   7. frames at or past the valid count are set to 0 (also when not normalising).
//
// Output layout: time-major [n_frames, n_mels], frame t at out[t * n_mels] (NeMo's tensor is
// [n_mels, n_frames]; this is its transpose, the layout the encoder's subsampling reads).
//
// Threads: frames are split over the team (each frame is one thread's work, computed with the
// same code in the same order), and the normalisation statistics are computed per mel bin by
// one thread in frame order, in double. Results are bitwise identical for any team size.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/fft.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk {

struct LogMelConfig {
    int sample_rate = 16000;
    int n_fft = 512;         // power of two
    int win_length = 400;    // <= n_fft; the window passed to LogMel has this many samples
    int hop_length = 160;
    int n_mels = 80;
    float preemph = 0.97f;   // 0 turns pre-emphasis off
    float mag_power = 2.0f;
    float log_zero_guard = 5.9604644775390625e-08f;  // 2^-24, "add" guard type
    bool normalize_per_feature = true;
};

class LogMel {
public:
    // window: win_length floats (NeMo's preprocessor.featurizer.window, a symmetric Hann).
    // filterbank: n_mels x (n_fft/2 + 1) floats, row-major (preprocessor.featurizer.fb).
    // The FFT runs on `kernels` (the model's level). Throws std::invalid_argument when the
    // sizes do not fit the config.
    LogMel(const LogMelConfig& config, std::vector<float> window, std::vector<float> filterbank,
           const kernels::KernelTable& kernels);

    const LogMelConfig& config() const { return cfg_; }

    // Frames produced for n_samples samples: 1 + n_samples / hop_length.
    int64_t n_frames(int64_t n_samples) const;
    // Frames that count (NeMo's seq_len): n_samples / hop_length; the rest are output as 0.
    int64_t valid_frames(int64_t n_samples) const;

    // Writes n_frames(n_samples) * n_mels floats to out (time-major). samples: n_samples
    // floats at config().sample_rate; n_samples >= 0. Scratch comes from arena and is given
    // back before returning.
    void compute(ThreadTeam& team, Arena& arena, const float* samples, int64_t n_samples,
                 float* out) const;

    // Incremental features for a live stream of a model without normalisation: frames
    // [t0, t1) (before normalisation, time-major) from the signal's samples [first, n_samples)
    // held in `samples` (samples[0] is signal sample `first`); n_samples is how much of the signal
    // exists so far. A frame's value is its value in compute() on the whole signal once
    // frame_ready(t, n_samples) (it then reads no sample at or past n_samples), or once
    // n_samples is the signal's final length. Every frame needs samples from
    // first_sample_needed(t) on.
    void compute_frames(ThreadTeam& team, const float* samples, int64_t first, int64_t n_samples, int64_t t0,
                        int64_t t1, float* out) const;
    bool frame_ready(int64_t t, int64_t n_samples) const;
    int64_t first_sample_needed(int64_t t) const;

private:
    // Log-mel energies of frame t (before normalisation) into row[n_mels]; x[i - x0] is signal
    // sample i (samples the frame reads before x0 must not exist: index < 0); n is the signal's
    // length. scratch holds 2 * n_fft + 2 floats.
    void frame_log_mel(const float* x, int64_t x0, int64_t n, int64_t t, float* scratch, float* row) const;
    void normalize(ThreadTeam& team, Arena& arena, int64_t n_valid, float* out) const;

    LogMelConfig cfg_;
    const kernels::KernelTable* kernels_;
    kernels::RealFft fft_;
    std::vector<float> window_;         // win_length floats
    int window_begin_;                  // where the window starts inside the n_fft frame
    std::vector<float> filterbank_;     // [n_mels, n_bins]
    std::vector<int> fb_first_, fb_end_;  // per mel bin, the non-zero filter range [first, end)
};

}  // namespace pk
