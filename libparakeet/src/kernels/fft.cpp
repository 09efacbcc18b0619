#include "kernels/fft.h"
#include "kernels/fft_steps.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace pk::kernels {

namespace {

bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

// The portable transform: iterative radix-2 stages, then the split step.
void complex_fft_in_place(const RealFftTables& t, float* z) {
    const int m = t.n / 2;
    // Stage h = 1: the twiddle is 1, so the butterflies need no multiplication.
    if (m >= 2) {
        for (int s = 0; s < m; s += 2) {
            float* a = z + 2 * s;
            const float ar = a[0], ai = a[1], br = a[2], bi = a[3];
            a[0] = ar + br;
            a[1] = ai + bi;
            a[2] = ar - br;
            a[3] = ai - bi;
        }
    }
    for (int h = 2; h < m; h *= 2) {
        const float* w = t.stage_tw + 2 * (h - 1);
        for (int s = 0; s < m; s += 2 * h) {
            float* a = z + 2 * s;
            float* b = a + 2 * h;
            for (int j = 0; j < h; ++j) {
                const float wr = w[2 * j], wi = w[2 * j + 1];
                const float br = b[2 * j] * wr - b[2 * j + 1] * wi;
                const float bi = b[2 * j] * wi + b[2 * j + 1] * wr;
                const float ar = a[2 * j], ai = a[2 * j + 1];
                a[2 * j] = ar + br;
                a[2 * j + 1] = ai + bi;
                b[2 * j] = ar - br;
                b[2 * j + 1] = ai - bi;
            }
        }
    }
}

}  // namespace

void fft_pack_bit_reversed(const RealFftTables& t, const float* in, float* out) {
    for (int j = 0; j < t.n / 2; ++j) {
        const uint32_t r = t.bitrev[j];
        out[2 * r] = in[2 * j];
        out[2 * r + 1] = in[2 * j + 1];
    }
}

void fft_split_ends(const RealFftTables& t, float* out) {
    const int m = t.n / 2;
    const float z0r = out[0], z0i = out[1];
    out[0] = z0r + z0i;
    out[1] = 0.0f;
    out[2 * m] = z0r - z0i;
    out[2 * m + 1] = 0.0f;
}

void real_fft_portable(const RealFftTables& t, const float* in, float* out) {
    const int m = t.n / 2;
    fft_pack_bit_reversed(t, in, out);
    complex_fft_in_place(t, out);

    // Split step. With Z = FFT_m(z), the even- and odd-sample spectra are
    //   E[k] = (Z[k] + conj Z[m-k]) / 2,   O[k] = (Z[k] - conj Z[m-k]) / (2i),
    // and X[k] = E[k] + W^k O[k], X[m-k] = conj(E[k] - W^k O[k]) with W = exp(-2*pi*i/n).
    // Bins k and m-k are read before either is written, so this runs in place.
    fft_split_ends(t, out);
    for (int k = 1; k <= m / 2; ++k) {
        const float zr = out[2 * k], zi = out[2 * k + 1];
        const float cr = out[2 * (m - k)], ci = out[2 * (m - k) + 1];
        const float er = 0.5f * (zr + cr), ei = 0.5f * (zi - ci);
        const float orr = 0.5f * (zi + ci), oi = -0.5f * (zr - cr);
        const float wr = t.split_tw[2 * k], wi = t.split_tw[2 * k + 1];
        const float tr = wr * orr - wi * oi;
        const float ti = wr * oi + wi * orr;
        out[2 * k] = er + tr;
        out[2 * k + 1] = ei + ti;
        out[2 * (m - k)] = er - tr;
        out[2 * (m - k) + 1] = ti - ei;
    }
}

void add_fft_scalar(KernelTable& t) { t.fft.real_forward = real_fft_portable; }

RealFft::RealFft(int n) : n_(n), m_(n / 2) {
    if (n < 2 || !is_power_of_two(n)) {
        throw std::invalid_argument("RealFft: length must be a power of two >= 2, got " +
                                    std::to_string(n));
    }
    int log2m = 0;
    while ((1 << log2m) < m_) ++log2m;

    bitrev_.resize(m_);
    for (int j = 0; j < m_; ++j) {
        uint32_t r = 0;
        for (int b = 0; b < log2m; ++b) r |= ((static_cast<uint32_t>(j) >> b) & 1u) << (log2m - 1 - b);
        bitrev_[j] = r;
    }

    // Twiddles in double, rounded once: the float error then stays at one rounding per factor.
    const double pi = 3.14159265358979323846;
    stage_tw_.resize(2 * static_cast<size_t>(m_ > 1 ? m_ - 1 : 0));
    for (int h = 1; h < m_; h *= 2) {
        float* w = stage_tw_.data() + 2 * (h - 1);
        for (int j = 0; j < h; ++j) {
            const double a = -pi * j / h;
            w[2 * j] = static_cast<float>(std::cos(a));
            w[2 * j + 1] = static_cast<float>(std::sin(a));
        }
    }
    split_tw_.resize(2 * static_cast<size_t>(m_ / 2 + 1));
    for (int k = 0; k <= m_ / 2; ++k) {
        const double a = -2.0 * pi * k / n_;
        split_tw_[2 * k] = static_cast<float>(std::cos(a));
        split_tw_[2 * k + 1] = static_cast<float>(std::sin(a));
    }
}

}  // namespace pk::kernels
