#include "model/frontend/resample.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

namespace pk {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kMaxPhases = 1024;
constexpr double kStopbandDb = 90.0;
// Cutoff and transition band, as fractions of the lower of the two Nyquist frequencies.
constexpr double kCutoff = 0.95;
constexpr double kTransition = 0.10;
constexpr int64_t kOutputsPerChunk = 2048;

// Modified Bessel function of the first kind, order 0 (power series; converges fast for
// the arguments a Kaiser window uses).
double bessel_i0(double x) {
    double sum = 1.0, term = 1.0;
    const double q = 0.25 * x * x;
    for (int k = 1; k < 200; ++k) {
        term *= q / (static_cast<double>(k) * k);
        sum += term;
        if (term < 1e-17 * sum) break;
    }
    return sum;
}

// Sum of x[i0 + k] * h[k] over k < taps (a multiple of 8), with x taken as zero outside
// [0, n). Eight partial sums in a fixed order: vectorisable, and the same result every time.
float dot(const float* x, int64_t n, int64_t i0, const float* h, int taps) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (i0 >= 0 && i0 + taps <= n) {
        const float* s = x + i0;
        for (int k = 0; k < taps; k += 8)
            for (int u = 0; u < 8; ++u) acc[u] += s[k + u] * h[k + u];
    } else {
        for (int k = 0; k < taps; k += 8)
            for (int u = 0; u < 8; ++u) {
                const int64_t i = i0 + k + u;
                acc[u] += (i >= 0 && i < n ? x[i] : 0.0f) * h[k + u];
            }
    }
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace

Resampler::Resampler(int in_rate, int out_rate) : in_rate_(in_rate), out_rate_(out_rate) {
    if (in_rate <= 0 || out_rate <= 0) {
        throw std::invalid_argument("Resampler: sample rates must be positive, got " +
                                    std::to_string(in_rate) + " -> " + std::to_string(out_rate));
    }
    const int64_t g = std::gcd<int64_t>(in_rate, out_rate);
    up_ = out_rate / g;
    down_ = in_rate / g;
    interpolate_ = up_ > kMaxPhases;
    phases_ = interpolate_ ? kMaxPhases : static_cast<int>(up_);
    if (in_rate == out_rate) {  // process() copies; no filter
        taps_ = 0;
        return;
    }

    // Kaiser design, in units of input samples: cutoff rc (as a fraction of the input rate,
    // times 2) and transition width dw (fraction of the input rate).
    const double ratio = static_cast<double>(std::min(in_rate, out_rate)) / in_rate;
    const double rc = kCutoff * ratio;
    const double dw = 0.5 * kTransition * ratio;
    const double beta = 0.1102 * (kStopbandDb - 8.7);
    const double length = (kStopbandDb - 7.95) / (14.36 * dw);
    const double radius = 0.5 * length;  // g is zero for |tau| >= radius
    const int half = static_cast<int>(std::ceil(radius)) + 1;
    taps_ = (2 * half + 7) / 8 * 8;
    const int centre = taps_ / 2 - 1;  // tap k of phase phi sits at tau = phi + centre - k

    const double i0_beta = bessel_i0(beta);
    table_.assign(static_cast<size_t>(phases_ + 1) * taps_, 0.0f);
    for (int r = 0; r <= phases_; ++r) {
        const double phi = static_cast<double>(r) / phases_;
        float* row = &table_[static_cast<size_t>(r) * taps_];
        for (int k = 0; k < taps_; ++k) {
            const double tau = phi + centre - k;
            const double u = tau / radius;
            if (std::fabs(u) >= 1.0) continue;
            const double a = kPi * rc * tau;
            const double sinc = a == 0.0 ? 1.0 : std::sin(a) / a;
            const double window = bessel_i0(beta * std::sqrt(1.0 - u * u)) / i0_beta;
            row[k] = static_cast<float>(rc * sinc * window);
        }
    }
}

int64_t Resampler::output_length(int64_t n_in) const {
    if (n_in <= 0) return 0;
    return (n_in * up_ + down_ - 1) / down_;
}

float Resampler::output_sample(const float* in, int64_t n_in, int64_t j) const {
    const int64_t pos = j * down_;  // output j is at input time pos / up_
    const int64_t i = pos / up_;
    const int64_t p = pos % up_;
    const int64_t i0 = i - (taps_ / 2 - 1);
    if (!interpolate_) return dot(in, n_in, i0, &table_[static_cast<size_t>(p) * taps_], taps_);
    const int64_t scaled = p * phases_;
    const int64_t r = scaled / up_;
    const float frac = static_cast<float>(static_cast<double>(scaled % up_) / up_);
    const float a = dot(in, n_in, i0, &table_[static_cast<size_t>(r) * taps_], taps_);
    const float b = dot(in, n_in, i0, &table_[static_cast<size_t>(r + 1) * taps_], taps_);
    return a + frac * (b - a);
}

void Resampler::process(ThreadTeam& team, const float* in, int64_t n_in, float* out) const {
    const int64_t n_out = output_length(n_in);
    if (n_out == 0) return;
    if (in_rate_ == out_rate_) {
        std::memcpy(out, in, static_cast<size_t>(n_out) * sizeof(float));
        return;
    }
    parallel_for(team, n_out, kOutputsPerChunk, [&](int64_t begin, int64_t end) {
        for (int64_t j = begin; j < end; ++j) out[j] = output_sample(in, n_in, j);
    });
}

}  // namespace pk
