// Resampler: output lengths, identity at equal rates, passband tones keep their frequency and
// amplitude, tones at or above the target Nyquist are removed before they alias, upsampling
// images are removed, and results are bitwise identical across thread counts. The measured
// passband gain and stopband attenuation are printed (they back the numbers in resample.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "model/frontend/resample.h"
#include "runtime/thread_team.h"

namespace {

using pk::Resampler;

const double kPi = 3.14159265358979323846;

const double kToneAmplitude = 0.5, kTonePhase = 0.1;

std::vector<float> tone(int rate, double freq, double seconds) {
    std::vector<float> x(static_cast<size_t>(rate * seconds));
    for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(kToneAmplitude * std::sin(2 * kPi * freq * i / rate + kTonePhase));
    return x;
}

std::vector<float> resample(const Resampler& rs, const std::vector<float>& x, int threads = 2) {
    pk::ThreadTeam team(threads);
    std::vector<float> y(rs.output_length(static_cast<int64_t>(x.size())), -9.0f);
    rs.process(team, x.data(), static_cast<int64_t>(x.size()), y.data());
    return y;
}

struct ToneFit {
    double amplitude;  // of the best-fitting sinusoid at exactly `freq`
    double residual;   // rms of what that sinusoid does not explain
    double rms;        // rms of the whole signal
    double error;      // rms difference from the input tone itself (same amplitude and phase)
};

// Least-squares fit of a*cos + b*sin at `freq` over the middle of y (the first and last 0.1 s,
// where the filter sees the zero padding, are skipped).
ToneFit fit_tone(const std::vector<float>& y, int rate, double freq) {
    const size_t skip = rate / 10;
    double cc = 0, ss = 0, cs = 0, yc = 0, ys = 0, yy = 0;
    for (size_t i = skip; i + skip < y.size(); ++i) {
        const double c = std::cos(2 * kPi * freq * i / rate), s = std::sin(2 * kPi * freq * i / rate);
        cc += c * c; ss += s * s; cs += c * s; yc += y[i] * c; ys += y[i] * s; yy += static_cast<double>(y[i]) * y[i];
    }
    const double det = cc * ss - cs * cs;
    const double a = (yc * ss - ys * cs) / det, b = (ys * cc - yc * cs) / det;
    double res = 0, err = 0;
    size_t count = 0;
    for (size_t i = skip; i + skip < y.size(); ++i, ++count) {
        const double f = a * std::cos(2 * kPi * freq * i / rate) + b * std::sin(2 * kPi * freq * i / rate);
        res += (y[i] - f) * (y[i] - f);
        const double e = y[i] - kToneAmplitude * std::sin(2 * kPi * freq * i / rate + kTonePhase);
        err += e * e;
    }
    return {std::sqrt(a * a + b * b), std::sqrt(res / count), std::sqrt(yy / count), std::sqrt(err / count)};
}

double db(double ratio) { return 20.0 * std::log10(ratio); }

TEST(Resampler, OutputLengths) {
    struct Case { int rate; int64_t n_in, n_out; };
    for (const Case& c : {Case{48000, 48000, 16000}, Case{44100, 44100, 16000}, Case{8000, 8000, 16000},
                          Case{22050, 22050, 16000}, Case{44100, 441, 160}, Case{44100, 100, 37},
                          Case{48000, 1, 1}, Case{48000, 4, 2}, Case{8000, 1, 2}, Case{16000, 123, 123},
                          Case{44100, 0, 0}}) {
        EXPECT_EQ(Resampler(c.rate).output_length(c.n_in), c.n_out) << c.rate << " " << c.n_in;
    }
    EXPECT_THROW(Resampler(0), std::invalid_argument);
    EXPECT_THROW(Resampler(16000, -1), std::invalid_argument);
}

TEST(Resampler, EqualRatesCopy) {
    const std::vector<float> x = tone(16000, 1234.5, 0.3);
    EXPECT_EQ(resample(Resampler(16000), x), x);
}

TEST(Resampler, PassbandTonesKeepFrequencyAndAmplitude) {
    // Every common rate, plus 44056 Hz, whose rate pair has 2000 phases (the interpolated table).
    double worst_gain_db = 0, worst_residual_db = -300, worst_error_db = -300;
    for (int rate : {8000, 11025, 12000, 22050, 24000, 32000, 44056, 44100, 48000, 96000}) {
        const Resampler rs(rate);
        const double top = 0.9 * std::min(rate, 16000) / 2;  // passband edge
        for (double f : {100.0, 1000.0, 3000.0, 5000.0, 7000.0}) {
            if (f > top) continue;
            const std::vector<float> y = resample(rs, tone(rate, f, 1.0));
            ASSERT_EQ(y.size(), 16000u);
            const ToneFit fit = fit_tone(y, 16000, f);
            const double gain_db = db(fit.amplitude / kToneAmplitude), residual_db = db(fit.residual / kToneAmplitude);
            worst_gain_db = std::max(worst_gain_db, std::fabs(gain_db));
            const double error_db = db(fit.error / kToneAmplitude);
            worst_residual_db = std::max(worst_residual_db, residual_db);
            worst_error_db = std::max(worst_error_db, error_db);
            // A 1 kHz tone that came out at any other frequency would leave a residual near 0 dB;
            // the error against the input tone itself also catches a delay (the filter is centred).
            EXPECT_LT(std::fabs(gain_db), 0.01) << rate << " Hz input, " << f << " Hz tone";
            EXPECT_LT(residual_db, -70.0) << rate << " Hz input, " << f << " Hz tone";
            EXPECT_LT(error_db, -70.0) << rate << " Hz input, " << f << " Hz tone";
        }
    }
    std::printf("passband (100 Hz..7 kHz, all rates): max |gain| %.5f dB, max residual %.1f dB, "
                "max error vs input tone %.1f dB\n", worst_gain_db, worst_residual_db, worst_error_db);
}

TEST(Resampler, TonesAboveTargetNyquistAreRemoved) {
    // From 48 kHz and 44.1 kHz, anything at or above 8 kHz would alias into 0..8 kHz.
    double worst_db = -300;
    for (int rate : {48000, 44100, 22050}) {
        const Resampler rs(rate);
        for (double f : {8000.0, 8100.0, 8500.0, 9000.0, 10000.0, 12000.0, 15999.0, 20000.0, 23000.0}) {
            if (f >= rate / 2.0) continue;
            const std::vector<float> y = resample(rs, tone(rate, f, 1.0));
            const ToneFit fit = fit_tone(y, 16000, 1000.0);  // only rms is used
            const double att_db = db(fit.rms / (kToneAmplitude / std::sqrt(2.0)));
            worst_db = std::max(worst_db, att_db);
            EXPECT_LT(att_db, -60.0) << rate << " Hz input, " << f << " Hz tone";
        }
    }
    std::printf("stopband (>= 8 kHz into 16 kHz): worst output level %.1f dB\n", worst_db);
}

TEST(Resampler, UpsamplingRemovesImages) {
    // 8 kHz -> 16 kHz: a 3 kHz tone must not come with its 5 kHz image.
    double worst_db = -300;
    for (int rate : {8000, 11025}) {
        for (double f : {300.0, 3000.0, 3500.0}) {
            const std::vector<float> y = resample(Resampler(rate), tone(rate, f, 1.0));
            const ToneFit fit = fit_tone(y, 16000, f);
            worst_db = std::max(worst_db, db(fit.residual / kToneAmplitude));
            EXPECT_LT(db(fit.residual / kToneAmplitude), -70.0) << rate << " " << f;
        }
    }
    std::printf("upsampling images/residual: worst %.1f dB\n", worst_db);
}

TEST(Resampler, ShortInputs) {
    // A single sample and a handful: the right count of finite values.
    for (int rate : {8000, 44100, 48000}) {
        const Resampler rs(rate);
        for (int n : {1, 2, 3, 7}) {
            const std::vector<float> y = resample(rs, std::vector<float>(n, 0.25f), 1);
            ASSERT_EQ(static_cast<int64_t>(y.size()), rs.output_length(n));
            for (float v : y) EXPECT_TRUE(std::isfinite(v) && std::fabs(v) < 1.0f) << v;
        }
    }
}

TEST(Resampler, BitwiseIdenticalAcrossThreadCounts) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> x(44100 * 2 + 17);
    for (auto& v : x) v = dist(rng);
    for (int rate : {44100, 44056, 8000}) {
        const Resampler rs(rate);
        const std::vector<float> ref = resample(rs, x, 1);
        for (int threads : {2, 3, 4}) {
            const std::vector<float> got = resample(rs, x, threads);
            ASSERT_EQ(got.size(), ref.size());
            EXPECT_EQ(0, std::memcmp(got.data(), ref.data(), got.size() * sizeof(float)))
                << rate << " threads=" << threads;
        }
    }
}

}  // namespace
