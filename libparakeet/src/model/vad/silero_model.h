// Silero VAD v6: the network that gives one speech probability per 32 ms chunk, at 16 kHz
// (512 samples) or 8 kHz (256), as Silero's ONNX computes it:
//   [context | chunk] → right reflect pad → STFT (a strided conv with the stored basis) →
//   magnitude → 4 × (conv k3 p1 + ReLU) → LSTM cell (state carried) → ReLU → 1×1 conv → sigmoid.
//
// A loaded model is immutable and shared: any number of SileroState (one per stream or
// request) run on it at once. Weights stored F16 are widened to F32 once at load.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "kernels/fft.h"
#include "kernels/kernel_table.h"

namespace pk {

// One rate's network, its weights repacked for the dot products of step().
struct SileroBranch {
    int sample_rate = 0;
    int chunk = 0;        // new samples per call
    int context = 0;      // samples of the previous chunk prepended
    int n_fft = 0, hop = 0, reflect_pad = 0;
    int bins = 0;         // n_fft / 2 + 1
    std::vector<float> stft_basis;  // [2 * bins][n_fft]
    // When the basis is a windowed DFT (Silero's is: a periodic Hann window, checked at load to
    // 1e-6), the STFT runs as window × frame through a real FFT: the same magnitudes to float
    // rounding, at a small fraction of the dense product's cost. Otherwise fft is null.
    std::vector<float> window;  // [n_fft]
    std::shared_ptr<kernels::RealFft> fft;
    struct Conv {
        int in = 0, out = 0, stride = 1;
        std::vector<float> weight;  // [out][kernel * in]: tap k of input channel c at k * in + c
        std::vector<float> bias;    // [out]
    };
    std::array<Conv, 4> encoder;
    std::vector<float> lstm_weight;  // [4H][2H]: weight_ih row then weight_hh row
    std::vector<float> lstm_bias;    // [4H]: bias_ih + bias_hh
    std::vector<float> out_weight;   // [H]
    float out_bias = 0.f;
};

// The state one audio stream carries from chunk to chunk: the LSTM's (h, c) and the last
// `context` samples. Zero at the start, as Silero's reset_states() leaves it.
struct SileroState {
    std::vector<float> h, c, context;
};

class SileroVad {
public:
    static constexpr int kHidden = 128;
    static constexpr int kKernel = 3;

    // Loads and checks a `silero_vad` GGUF file. Throws ModelError (a malformed or foreign
    // file; another model kind is refused naming it) or GgufError. `isa`: the kernel level
    // (PARAKEET_CPU, the load option), as the other kinds choose it (checked_isa_level: a level
    // the CPU lacks is refused); unset, the CPU's highest.
    static std::unique_ptr<SileroVad> load(const std::string& path, std::optional<IsaLevel> isa = std::nullopt);
    static std::unique_ptr<SileroVad> load(const GgufReader& gguf, std::optional<IsaLevel> isa = std::nullopt);

    const std::string& path() const { return path_; }
    size_t file_bytes() const { return file_bytes_; }
    IsaLevel isa() const { return kernels_->level; }
    // The branch for 16000 or 8000 Hz; nullptr for other rates.
    const SileroBranch* branch(int sample_rate) const;

    SileroState initial_state(const SileroBranch& b) const;
    // The probability of one chunk of b.chunk samples (the caller zero-pads a partial last
    // chunk), advancing `state`. Depends only on the state and the samples.
    float step(const SileroBranch& b, SileroState& state, const float* chunk) const;

    // step() in its two halves. features(): the STFT and the conv encoder of one chunk, whose
    // input is the b.context samples before it (the previous chunk's last ones; zeros first)
    // and the chunk: no state, so the chunks of a recording can run on many threads.
    // decode(): the LSTM and the decoder on those kHidden features, advancing state.h/c
    // (not state.context). step() is features() then decode(), bit for bit.
    void features(const SileroBranch& b, const float* context, const float* chunk, float* out) const;
    float decode(const SileroBranch& b, SileroState& state, const float* features) const;

private:
    std::string path_;
    size_t file_bytes_ = 0;
    const kernels::KernelTable* kernels_ = nullptr;  // the level chosen at load
    SileroBranch b16_, b8_;
};

}  // namespace pk
