// CED's front end: torchaudio's MelSpectrogram then AmplitudeToDB, as CED's model applies them.
//
//   1. torch.stft(center=True, pad_mode="reflect"): the signal is reflect-padded by n_fft/2 on
//      both sides and frame t covers padded[t*hop, t*hop + n_fft) times the window (periodic
//      Hann, win_size = n_fft). T = 1 + n / hop frames.
//   2. power: |X|, then squared (torchaudio's spec.abs().pow(2)), in float.
//   3. mel = fb · power, fb [n_mels, n_fft/2+1] (HTK, norm None: the GGUF's baked buffer).
//   4. dB = 10 · log10(max(mel, amin)) (ref 1), then floored at max(dB) − top_db, the maximum
//      taken over the whole input (torchaudio's AmplitudeToDB on one [n_mels, T] tensor).
//
// Output layout: mel-major [n_mels, T], as torchaudio returns it. Frames are split over the
// team, each computed by one thread in a fixed order, so the result is bitwise the same at any
// thread count.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/fft.h"
#include "runtime/thread_team.h"

namespace pk {

struct CedFrontendConfig {
    int n_fft = 512;
    int hop = 160;
    int n_mels = 64;
    float amin = 1e-10f;
    float top_db = 120.f;
};

class CedFrontend {
public:
    // window: n_fft floats; filterbank: n_mels × (n_fft/2 + 1) floats. Throws
    // std::invalid_argument when n_fft is not a power of two or the sizes do not fit.
    CedFrontend(const CedFrontendConfig& config, std::vector<float> window, std::vector<float> filterbank,
                const kernels::KernelTable& kernels);

    const CedFrontendConfig& config() const { return cfg_; }
    // Frames of n samples: 1 + n / hop.
    int64_t frames(int64_t n) const { return 1 + n / cfg_.hop; }
    // The dB mel spectrogram of n samples (n > n_fft/2, the reflect padding's need; throws
    // std::invalid_argument otherwise), mel-major [n_mels, frames(n)].
    std::vector<float> compute(ThreadTeam& team, const float* samples, int64_t n) const;

private:
    CedFrontendConfig cfg_;
    std::vector<float> window_, filterbank_;
    // Each filter's non-zero bins [begin, end): the sum skips the zeros (an HTK triangle spans a
    // few dozen of the 257 bins), which changes no bit of it.
    std::vector<std::pair<int, int>> spans_;
    const kernels::KernelTable* kernels_;
    kernels::RealFft fft_;
};

}  // namespace pk
