// Real-input FFT of a power-of-two length (the STFT of the log-mel front end: n_fft 256..2048).
//
// A length-n real transform is done as one complex transform of n/2 points on the packed
// sequence z[j] = x[2j] + i·x[2j+1], followed by the usual split step that separates the even
// and odd halves again. The complex transform is an iterative radix-2 decimation-in-time FFT
// with per-stage contiguous twiddle tables, all computed in double and rounded once to float.
// Everything works in the caller's output buffer, so a transform allocates nothing and one
// RealFft can be shared by all threads. The arithmetic order is fixed by the code alone, so a
// given input always gives bitwise the same output at a given ISA level.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernel_table.h"

namespace pk::kernels {

class RealFft {
public:
    // n: a power of two, at least 2. Throws std::invalid_argument otherwise.
    explicit RealFft(int n);

    int size() const { return n_; }
    // Number of non-redundant output bins, n/2 + 1.
    int n_bins() const { return m_ + 1; }

    // X[k] = sum_j in[j] * exp(-2*pi*i*j*k/n) for k = 0..n/2, written interleaved:
    // out[2k] = Re X[k], out[2k+1] = Im X[k] (n + 2 floats; Im X[0] = Im X[n/2] = 0).
    // `in` holds n floats and must not overlap `out`. Unnormalised, like torch.stft. Runs
    // k's FftKernels::real_forward.
    void forward(const KernelTable& k, const float* in, float* out) const {
        k.fft.real_forward(tables(), in, out);
    }

private:
    RealFftTables tables() const {
        return RealFftTables{n_, bitrev_.data(), stage_tw_.data(), split_tw_.data()};
    }

    int n_;  // real length
    int m_;  // complex length n/2
    std::vector<uint32_t> bitrev_;   // m_ entries: where packed sample j lands before the stages
    std::vector<float> stage_tw_;    // per stage of half-size h (1, 2, ..., m/2): exp(-i*pi*j/h),
                                     // j < h, interleaved (re, im); stage h starts at 2*(h-1)
    std::vector<float> split_tw_;    // exp(-2*pi*i*k/n), k = 0..m/2, interleaved (re, im)
};

}  // namespace pk::kernels
