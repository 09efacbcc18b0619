// LogMel against a straightforward double-precision implementation of NeMo's recipe (naive
// DFT, explicit zero padding, explicit padded window), on odd lengths including a single
// frame and a single sample; frame counts; bitwise determinism across thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "isa_levels.h"
#include "model/frontend/log_mel.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace {

using pk::LogMel;
using pk::LogMelConfig;

const double kPi = 3.14159265358979323846;

// torch.hann_window(n, periodic=False).
std::vector<float> symmetric_hann(int n) {
    std::vector<float> w(n);
    for (int k = 0; k < n; ++k) w[k] = static_cast<float>(0.5 - 0.5 * std::cos(2.0 * kPi * k / (n - 1)));
    if (n == 1) w[0] = 1.0f;
    return w;
}

// Triangular filters evenly spaced on the HTK mel scale from 0 Hz to Nyquist, [n_mels, n_bins].
std::vector<float> triangular_filterbank(int n_mels, int n_fft, int sample_rate) {
    const int n_bins = n_fft / 2 + 1;
    auto hz_to_mel = [](double f) { return 2595.0 * std::log10(1.0 + f / 700.0); };
    auto mel_to_hz = [](double m) { return 700.0 * (std::pow(10.0, m / 2595.0) - 1.0); };
    const double mel_max = hz_to_mel(sample_rate / 2.0);
    std::vector<double> edges(n_mels + 2);
    for (int i = 0; i < n_mels + 2; ++i) edges[i] = mel_to_hz(mel_max * i / (n_mels + 1));
    std::vector<float> fb(static_cast<size_t>(n_mels) * n_bins, 0.0f);
    for (int m = 0; m < n_mels; ++m) {
        for (int k = 0; k < n_bins; ++k) {
            const double f = static_cast<double>(k) * sample_rate / n_fft;
            const double up = (f - edges[m]) / (edges[m + 1] - edges[m]);
            const double down = (edges[m + 2] - f) / (edges[m + 2] - edges[m + 1]);
            fb[static_cast<size_t>(m) * n_bins + k] = static_cast<float>(std::max(0.0, std::min(up, down)));
        }
    }
    return fb;
}

// Tones plus noise, so every mel bin has energy well above the log guard.
std::vector<float> test_signal(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> noise(-0.05f, 0.05f);
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) {
        const double t = i / 16000.0;
        x[i] = static_cast<float>(0.3 * std::sin(2 * kPi * 440 * t) + 0.2 * std::sin(2 * kPi * 2500 * t + 0.3) +
                                  0.1 * std::sin(2 * kPi * 6100 * t * (1 + t))) +
               noise(rng);
    }
    return x;
}

// The NeMo recipe written out plainly in double: [n_frames, n_mels].
std::vector<double> reference_log_mel(const LogMelConfig& c, const std::vector<float>& window,
                                      const std::vector<float>& fb, const std::vector<float>& x) {
    const int64_t L = static_cast<int64_t>(x.size());
    const int n_fft = c.n_fft, n_bins = n_fft / 2 + 1;
    std::vector<double> y(L);
    for (int64_t i = 0; i < L; ++i) y[i] = i == 0 ? x[0] : x[i] - static_cast<double>(c.preemph) * x[i - 1];
    // center=True, constant padding.
    std::vector<double> padded(L + n_fft, 0.0);
    for (int64_t i = 0; i < L; ++i) padded[n_fft / 2 + i] = y[i];
    std::vector<double> wpad(n_fft, 0.0);
    const int left = (n_fft - c.win_length) / 2;
    for (int k = 0; k < c.win_length; ++k) wpad[left + k] = window[k];
    const int64_t frames = 1 + (static_cast<int64_t>(padded.size()) - n_fft) / c.hop_length;
    std::vector<double> cos_t(n_fft), sin_t(n_fft);
    for (int j = 0; j < n_fft; ++j) {
        cos_t[j] = std::cos(2 * kPi * j / n_fft);
        sin_t[j] = -std::sin(2 * kPi * j / n_fft);
    }
    std::vector<double> out(frames * c.n_mels), power(n_bins);
    for (int64_t t = 0; t < frames; ++t) {
        for (int k = 0; k < n_bins; ++k) {
            double re = 0, im = 0;
            for (int j = 0; j < n_fft; ++j) {
                const double v = padded[t * c.hop_length + j] * wpad[j];
                re += v * cos_t[(static_cast<int64_t>(j) * k) % n_fft];
                im += v * sin_t[(static_cast<int64_t>(j) * k) % n_fft];
            }
            power[k] = std::pow(std::sqrt(re * re + im * im), c.mag_power);
        }
        for (int m = 0; m < c.n_mels; ++m) {
            double mel = 0;
            for (int k = 0; k < n_bins; ++k) mel += fb[static_cast<size_t>(m) * n_bins + k] * power[k];
            out[t * c.n_mels + m] = std::log(mel + c.log_zero_guard);
        }
    }
    const int64_t valid = L / c.hop_length;
    if (c.normalize_per_feature) {
        for (int m = 0; m < c.n_mels; ++m) {
            double mean = 0, ss = 0;
            for (int64_t t = 0; t < valid; ++t) mean += out[t * c.n_mels + m];
            mean /= static_cast<double>(valid);
            for (int64_t t = 0; t < valid; ++t) ss += std::pow(out[t * c.n_mels + m] - mean, 2);
            const double sd = valid > 1 ? std::sqrt(ss / (valid - 1)) : 0.0;
            for (int64_t t = 0; t < valid; ++t) out[t * c.n_mels + m] = (out[t * c.n_mels + m] - mean) / (sd + 1e-5);
        }
    }
    for (int64_t t = valid; t < frames; ++t)
        for (int m = 0; m < c.n_mels; ++m) out[t * c.n_mels + m] = 0.0;
    return out;
}

std::vector<float> run_log_mel(const LogMel& lm, const std::vector<float>& x, int threads) {
    pk::ThreadTeam team(threads);
    pk::Arena arena;
    std::vector<float> out(lm.n_frames(static_cast<int64_t>(x.size())) * lm.config().n_mels, -7.0f);
    lm.compute(team, arena, x.data(), static_cast<int64_t>(x.size()), out.data());
    EXPECT_EQ(arena.used_bytes(), 0u) << "compute must give its scratch back";
    return out;
}

// Float rounding in the FFT leaves each bin with an error of order eps * sqrt(frame energy), so
// a mel bin far below the frame's loudest one carries a larger relative error; the allowed
// log-domain error grows accordingly (by sqrt(peak / mel)). Normalised features are compared
// with one absolute tolerance (their error is the log error divided by the bin's std).
void expect_matches_reference(const LogMelConfig& c, int64_t length, double tol) {
    const std::vector<float> window = symmetric_hann(c.win_length);
    const std::vector<float> fb = triangular_filterbank(c.n_mels, c.n_fft, c.sample_rate);
    const LogMel lm(c, window, fb, isa_test::highest_kernels());
    const std::vector<float> x = test_signal(length, static_cast<uint32_t>(length));
    const std::vector<double> ref = reference_log_mel(c, window, fb, x);
    const std::vector<float> got = run_log_mel(lm, x, 2);
    ASSERT_EQ(got.size(), ref.size()) << "length " << length;
    const int64_t valid = lm.valid_frames(length);
    ASSERT_EQ(static_cast<int64_t>(got.size()), lm.n_frames(length) * c.n_mels);
    for (int64_t t = 0; t < lm.n_frames(length); ++t) {
        const double* r = &ref[t * c.n_mels];
        const float* g = &got[t * c.n_mels];
        const double peak = *std::max_element(r, r + c.n_mels);
        for (int m = 0; m < c.n_mels; ++m) {
            if (t >= valid) {
                ASSERT_EQ(g[m], 0.0f) << "padding frame " << t << " mel " << m;
                continue;
            }
            const double allowed = c.normalize_per_feature ? tol : tol + 2e-6 * std::exp(0.5 * (peak - r[m]));
            ASSERT_NEAR(g[m], r[m], allowed) << "length " << length << " frame " << t << " mel " << m;
        }
    }
}

LogMelConfig nemo_config() { return LogMelConfig{}; }  // the defaults are NeMo's 80-mel preprocessor

TEST(LogMel, FrameCountsFollowNeMo) {
    const LogMel lm(nemo_config(), symmetric_hann(400), triangular_filterbank(80, 512, 16000),
                    isa_test::highest_kernels());
    struct Case { int64_t samples, frames, valid; };
    for (const Case& c : {Case{160000, 1001, 1000}, Case{16037, 101, 100}, Case{1600, 11, 10},
                          Case{160, 2, 1}, Case{159, 1, 0}, Case{319, 2, 1}, Case{1, 1, 0}, Case{0, 1, 0}}) {
        EXPECT_EQ(lm.n_frames(c.samples), c.frames) << c.samples;
        EXPECT_EQ(lm.valid_frames(c.samples), c.valid) << c.samples;
    }
}

TEST(LogMel, NormalisedFeaturesMatchReference) {
    // Normalised log-mels are O(1); the float recipe's rounding shows up below 1e-4 here.
    for (int64_t length : {int64_t{1600}, int64_t{16000 + 37}, int64_t{160}, int64_t{1}, int64_t{161 * 3}}) {
        expect_matches_reference(nemo_config(), length, 5e-4);
    }
}

TEST(LogMel, RawLogMelMatchesReference) {
    // Without normalisation the raw log energies (about -12..8 here) are compared directly.
    LogMelConfig c = nemo_config();
    c.normalize_per_feature = false;
    for (int64_t length : {int64_t{1600}, int64_t{16000 + 37}, int64_t{160}, int64_t{1}}) {
        expect_matches_reference(c, length, 2e-5);
    }
}

TEST(LogMel, OtherGeometries) {
    // 128 mels, a smaller FFT with an odd window (uneven central padding), magnitude spectrum.
    LogMelConfig c = nemo_config();
    c.n_mels = 128;
    c.n_fft = 1024;
    c.win_length = 801;
    c.hop_length = 241;
    expect_matches_reference(c, 12345, 5e-4);
    c = nemo_config();
    c.n_mels = 40;
    c.n_fft = 256;
    c.win_length = 201;
    c.hop_length = 80;
    c.mag_power = 1.0f;
    c.preemph = 0.0f;
    expect_matches_reference(c, 4001, 5e-4);
}

TEST(LogMel, OneValidFrameNormalisesToZero) {
    // NeMo: std of one frame is NaN, replaced by 0, so (x - mean) / 1e-5 is exactly 0.
    const LogMel lm(nemo_config(), symmetric_hann(400), triangular_filterbank(80, 512, 16000),
                    isa_test::highest_kernels());
    const std::vector<float> out = run_log_mel(lm, test_signal(300, 5), 1);
    ASSERT_EQ(out.size(), 2u * 80);
    for (float v : out) EXPECT_EQ(v, 0.0f);
}

TEST(LogMel, BitwiseIdenticalAcrossThreadCounts) {
    const LogMel lm(nemo_config(), symmetric_hann(400), triangular_filterbank(80, 512, 16000),
                    isa_test::highest_kernels());
    const std::vector<float> x = test_signal(3 * 16000 + 77, 9);
    const std::vector<float> ref = run_log_mel(lm, x, 1);
    for (int threads : {2, 3, 4}) {
        const std::vector<float> got = run_log_mel(lm, x, threads);
        ASSERT_EQ(got.size(), ref.size());
        EXPECT_EQ(0, std::memcmp(got.data(), ref.data(), got.size() * sizeof(float))) << "threads=" << threads;
    }
}

// Hours of audio go through compute in one call: its scratch (per thread, one frame's FFT
// buffers; for the statistics, a few values per mel bin) must not grow with the length, so no
// power spectrum of every frame and no padded copy of the signal.
TEST(LogMel, ScratchDoesNotGrowWithTheLength) {
    const LogMel lm(nemo_config(), symmetric_hann(400), triangular_filterbank(80, 512, 16000),
                    isa_test::highest_kernels());
    auto scratch_for = [&](int64_t n_samples) {
        const std::vector<float> x = test_signal(n_samples, 3);
        pk::ThreadTeam team(2);
        pk::Arena arena;
        std::vector<float> out(lm.n_frames(n_samples) * lm.config().n_mels);
        lm.compute(team, arena, x.data(), n_samples, out.data());
        return arena.high_water_bytes();
    };
    const size_t one_second = scratch_for(16000);
    EXPECT_EQ(scratch_for(120 * 16000), one_second);
    // 2 threads x (2 * n_fft + 2) floats, plus 16 bytes per mel bin, plus alignment.
    EXPECT_LE(one_second, 2 * (2 * 512 + 2 + 16) * sizeof(float) + 80 * 16 + 4 * pk::Arena::kAlignment);
}

TEST(LogMel, RejectsMismatchedInputs) {
    const LogMelConfig c = nemo_config();
    EXPECT_THROW(LogMel(c, symmetric_hann(399), triangular_filterbank(80, 512, 16000),
                        isa_test::highest_kernels()), std::invalid_argument);
    EXPECT_THROW(LogMel(c, symmetric_hann(400), triangular_filterbank(64, 512, 16000),
                        isa_test::highest_kernels()), std::invalid_argument);
    LogMelConfig bad = c;
    bad.n_fft = 500;
    EXPECT_THROW(LogMel(bad, symmetric_hann(400), std::vector<float>(80 * 251),
                        isa_test::highest_kernels()), std::invalid_argument);
    bad = c;
    bad.win_length = 600;
    EXPECT_THROW(LogMel(bad, symmetric_hann(600), triangular_filterbank(80, 512, 16000),
                        isa_test::highest_kernels()), std::invalid_argument);
}

}  // namespace
