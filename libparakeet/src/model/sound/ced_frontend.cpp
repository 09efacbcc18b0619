#include "model/sound/ced_frontend.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "runtime/thread_team.h"

namespace pk {

CedFrontend::CedFrontend(const CedFrontendConfig& config, std::vector<float> window, std::vector<float> filterbank,
                         const kernels::KernelTable& kernels)
    : cfg_(config), window_(std::move(window)), filterbank_(std::move(filterbank)), kernels_(&kernels),
      fft_(config.n_fft) {
    const size_t bins = static_cast<size_t>(cfg_.n_fft / 2 + 1);
    if (window_.size() != static_cast<size_t>(cfg_.n_fft))
        throw std::invalid_argument("CED front end: the window has " + std::to_string(window_.size()) +
                                    " samples, n_fft is " + std::to_string(cfg_.n_fft));
    if (filterbank_.size() != bins * static_cast<size_t>(cfg_.n_mels))
        throw std::invalid_argument("CED front end: the filterbank does not have n_mels x (n_fft/2 + 1) entries");
    if (cfg_.hop <= 0 || cfg_.n_mels <= 0) throw std::invalid_argument("CED front end: hop and n_mels must be positive");
    for (int m = 0; m < cfg_.n_mels; ++m) {
        const float* fb = filterbank_.data() + static_cast<size_t>(m) * bins;
        int begin = 0, end = static_cast<int>(bins);
        while (begin < end && fb[begin] == 0.f) ++begin;
        while (end > begin && fb[end - 1] == 0.f) --end;
        spans_.emplace_back(begin, end);
    }
}

std::vector<float> CedFrontend::compute(ThreadTeam& team, const float* samples, int64_t n) const {
    const int64_t pad = cfg_.n_fft / 2;
    if (n <= pad)
        throw std::invalid_argument("CED front end: " + std::to_string(n) + " samples; reflect padding needs more than " +
                                    std::to_string(pad));
    const int64_t T = frames(n);
    const int bins = cfg_.n_fft / 2 + 1;
    const int n_mels = cfg_.n_mels;
    std::vector<float> out(static_cast<size_t>(n_mels) * static_cast<size_t>(T));
    // Reflect padding (the edge sample is not repeated): padded[i] = x[reflect(i - pad)].
    auto at = [&](int64_t i) {
        int64_t j = i - pad;
        if (j < 0) j = -j;
        if (j >= n) j = 2 * (n - 1) - j;
        return samples[j];
    };
    parallel_for(team, T, 8, [&](int64_t t0, int64_t t1) {
        std::vector<float> frame(static_cast<size_t>(cfg_.n_fft)), spec(static_cast<size_t>(cfg_.n_fft + 2)),
            power(static_cast<size_t>(bins));
        for (int64_t t = t0; t < t1; ++t) {
            for (int k = 0; k < cfg_.n_fft; ++k) frame[k] = at(t * cfg_.hop + k) * window_[k];
            fft_.forward(*kernels_, frame.data(), spec.data());
            for (int b = 0; b < bins; ++b) {
                const float mag = std::sqrt(spec[2 * b] * spec[2 * b] + spec[2 * b + 1] * spec[2 * b + 1]);
                power[b] = mag * mag;
            }
            for (int m = 0; m < n_mels; ++m) {
                const float* fb = filterbank_.data() + static_cast<size_t>(m) * bins;
                double acc = 0.0;
                for (int b = spans_[m].first; b < spans_[m].second; ++b) acc += static_cast<double>(fb[b]) * power[b];
                const float mel = std::max(static_cast<float>(acc), cfg_.amin);
                out[static_cast<size_t>(m) * T + t] = 10.f * std::log10(mel);
            }
        }
    });
    const float floor = *std::max_element(out.begin(), out.end()) - cfg_.top_db;
    for (float& v : out) v = std::max(v, floor);
    return out;
}

}  // namespace pk
