#include "model/frontend/log_mel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace pk {

namespace {

void require(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("LogMel: " + what);
}

// Below this many frames the work is too small to be worth waking the team.
constexpr int64_t kMinFramesPerThread = 4;

}  // namespace

LogMel::LogMel(const LogMelConfig& config, std::vector<float> window, std::vector<float> filterbank,
               const kernels::KernelTable& kernels)
    : cfg_(config), kernels_(&kernels), fft_(config.n_fft), window_(std::move(window)),
      window_begin_((config.n_fft - config.win_length) / 2), filterbank_(std::move(filterbank)) {
    require(cfg_.sample_rate > 0, "sample_rate must be positive");
    require(cfg_.hop_length > 0, "hop_length must be positive");
    require(cfg_.n_mels > 0, "n_mels must be positive");
    require(cfg_.win_length > 0 && cfg_.win_length <= cfg_.n_fft,
            "win_length must be in [1, n_fft], got " + std::to_string(cfg_.win_length));
    require(window_.size() == static_cast<size_t>(cfg_.win_length),
            "window has " + std::to_string(window_.size()) + " samples, win_length is " +
                std::to_string(cfg_.win_length));
    const int n_bins = fft_.n_bins();
    require(filterbank_.size() == static_cast<size_t>(cfg_.n_mels) * n_bins,
            "filterbank has " + std::to_string(filterbank_.size()) + " values, expected n_mels x " +
                std::to_string(n_bins));

    // Mel filters are narrow triangles: summing only over each row's non-zero span gives the
    // same value as the dense product (the skipped terms are exact zeros) at a fraction of
    // the cost.
    fb_first_.assign(cfg_.n_mels, 0);
    fb_end_.assign(cfg_.n_mels, 0);
    for (int m = 0; m < cfg_.n_mels; ++m) {
        const float* row = &filterbank_[static_cast<size_t>(m) * n_bins];
        int first = 0, end = n_bins;
        while (first < n_bins && row[first] == 0.0f) ++first;
        while (end > first && row[end - 1] == 0.0f) --end;
        fb_first_[m] = first;
        fb_end_[m] = end;
    }
}

int64_t LogMel::n_frames(int64_t n_samples) const {
    return 1 + std::max<int64_t>(n_samples, 0) / cfg_.hop_length;
}

int64_t LogMel::valid_frames(int64_t n_samples) const {
    if (n_samples <= 0) return 0;
    // FilterbankFeatures.get_seq_len with center=True: floor((L + 2*(n_fft//2) - n_fft) / hop).
    const int64_t padded = n_samples + 2 * (cfg_.n_fft / 2) - cfg_.n_fft;
    return std::max<int64_t>(padded, 0) / cfg_.hop_length;
}

bool LogMel::frame_ready(int64_t t, int64_t n_samples) const {
    // frame t's window ends at signal index t*hop - n_fft/2 + window_begin_ + win (exclusive)
    const int64_t end = t * cfg_.hop_length - cfg_.n_fft / 2 + window_begin_ + cfg_.win_length;
    return end <= n_samples && t < valid_frames(n_samples);
}

int64_t LogMel::first_sample_needed(int64_t t) const {
    // the window's first sample and, for pre-emphasis, the one before it
    return std::max<int64_t>(0, t * cfg_.hop_length - cfg_.n_fft / 2 + window_begin_ - 1);
}

void LogMel::compute_frames(ThreadTeam& team, const float* samples, int64_t first, int64_t n_samples, int64_t t0,
                            int64_t t1, float* out) const {
    if (t1 <= t0) return;
    if (first > first_sample_needed(t0))
        throw std::invalid_argument("LogMel::compute_frames: the samples start after the first frame's window");
    const size_t scratch_floats = (2 * static_cast<size_t>(cfg_.n_fft) + 2 + 15) & ~size_t{15};
    const int64_t n = t1 - t0;
    const int nth = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(team.size(), n / kMinFramesPerThread)));
    std::vector<float> scratch(scratch_floats * static_cast<size_t>(nth));
    auto run_slice = [&](int ith, int n_slices) {
        const int64_t begin = t0 + n * ith / n_slices, end = t0 + n * (ith + 1) / n_slices;
        float* sc = scratch.data() + scratch_floats * ith;
        for (int64_t t = begin; t < end; ++t) frame_log_mel(samples, first, n_samples, t, sc, out + (t - t0) * cfg_.n_mels);
    };
    if (nth == 1) {
        run_slice(0, 1);
    } else {
        team.run([&](int ith, int) {
            if (ith < nth) run_slice(ith, nth);
        });
    }
}

void LogMel::frame_log_mel(const float* x, int64_t x0, int64_t n, int64_t t, float* scratch, float* row) const {
    const int n_fft = cfg_.n_fft;
    const int win = cfg_.win_length;
    const float pe = cfg_.preemph;
    float* frame = scratch;           // n_fft floats; later reused for the power spectrum
    float* spec = scratch + n_fft;    // n_fft + 2 floats

    // Frame t starts at padded index t*hop, i.e. at signal index t*hop - n_fft/2; the window
    // covers [window_begin_, window_begin_ + win) of it. Pre-emphasis is applied on the fly.
    std::fill(frame, frame + n_fft, 0.0f);
    const int64_t base = t * cfg_.hop_length - n_fft / 2 + window_begin_;
    const float* w = window_.data();
    float* dst = frame + window_begin_;
    if (base >= 1 && base + win <= n) {
        const float* s = x + (base - x0);
        for (int k = 0; k < win; ++k) dst[k] = (s[k] - pe * s[k - 1]) * w[k];
    } else {
        for (int k = 0; k < win; ++k) {
            const int64_t i = base + k;
            float y = 0.0f;
            if (i == 0 && n > 0) {
                y = x[0 - x0];
            } else if (i > 0 && i < n) {
                y = x[i - x0] - pe * x[i - 1 - x0];
            }
            dst[k] = y * w[k];
        }
    }

    fft_.forward(*kernels_, frame, spec);

    // NeMo takes the magnitude first and raises it to mag_power afterwards; doing the same
    // (rather than re^2 + im^2 directly) keeps the float rounding identical.
    const int n_bins = fft_.n_bins();
    float* power = frame;
    const float mp = cfg_.mag_power;
    for (int k = 0; k < n_bins; ++k) {
        const float re = spec[2 * k], im = spec[2 * k + 1];
        const float mag = std::sqrt(re * re + im * im);
        power[k] = mp == 2.0f ? mag * mag : mp == 1.0f ? mag : std::pow(mag, mp);
    }

    for (int m = 0; m < cfg_.n_mels; ++m) {
        const float* fb = &filterbank_[static_cast<size_t>(m) * n_bins];
        double acc = 0.0;
        for (int k = fb_first_[m]; k < fb_end_[m]; ++k) acc += static_cast<double>(fb[k]) * power[k];
        row[m] = std::log(static_cast<float>(acc) + cfg_.log_zero_guard);
    }
}

void LogMel::compute(ThreadTeam& team, Arena& arena, const float* samples, int64_t n_samples,
                     float* out) const {
    const int n_mels = cfg_.n_mels;
    const int64_t nf = n_frames(n_samples);
    const int64_t nv = valid_frames(n_samples);
    ArenaScope scope(arena);

    // Frames past the valid count are output as zeros whatever they hold, so only the valid
    // ones are computed.
    const size_t scratch_floats = (2 * static_cast<size_t>(cfg_.n_fft) + 2 + 15) & ~size_t{15};
    const int nth = static_cast<int>(std::max<int64_t>(
        1, std::min<int64_t>(team.size(), nv / kMinFramesPerThread)));
    float* scratch = arena.alloc_array<float>(scratch_floats * nth);
    auto run_slice = [&](int ith, int n_slices) {
        const int64_t begin = nv * ith / n_slices, end = nv * (ith + 1) / n_slices;
        float* s = scratch + scratch_floats * ith;
        for (int64_t t = begin; t < end; ++t) frame_log_mel(samples, 0, n_samples, t, s, out + t * n_mels);
    };
    if (nth == 1) {
        run_slice(0, 1);
    } else {
        team.run([&](int ith, int) {
            if (ith < nth) run_slice(ith, nth);
        });
    }
    std::fill(out + nv * n_mels, out + nf * n_mels, 0.0f);

    if (cfg_.normalize_per_feature && nv > 0) normalize(team, arena, nv, out);
}

void LogMel::normalize(ThreadTeam& team, Arena& arena, int64_t nv, float* out) const {
    const int n_mels = cfg_.n_mels;
    ArenaScope scope(arena);
    float* mean = arena.alloc_array<float>(n_mels);
    float* stdev = arena.alloc_array<float>(n_mels);
    double* acc = arena.alloc_array<double>(n_mels);

    // Statistics per mel bin, each bin summed by one thread in frame order, in double (NeMo
    // sums in float32 with an order of its own; double is at least as close to the exact
    // value and does not depend on how the bins are split over threads).
    parallel_for(team, n_mels, 16, [&](int64_t m0, int64_t m1) {
        for (int64_t m = m0; m < m1; ++m) acc[m] = 0.0;
        for (int64_t t = 0; t < nv; ++t) {
            const float* row = out + t * n_mels;
            for (int64_t m = m0; m < m1; ++m) acc[m] += row[m];
        }
        for (int64_t m = m0; m < m1; ++m) {
            mean[m] = static_cast<float>(acc[m] / static_cast<double>(nv));
            acc[m] = 0.0;
        }
        for (int64_t t = 0; t < nv; ++t) {
            const float* row = out + t * n_mels;
            for (int64_t m = m0; m < m1; ++m) {
                const float d = row[m] - mean[m];  // float32, as NeMo's x - x_mean
                acc[m] += static_cast<double>(d) * d;
            }
        }
        for (int64_t m = m0; m < m1; ++m) {
            // One valid frame: NeMo's std is 0/0 = NaN, which it replaces by 0.
            const float sd = nv > 1 ? static_cast<float>(std::sqrt(acc[m] / static_cast<double>(nv - 1)))
                                    : 0.0f;
            stdev[m] = sd + 1e-5f;
        }
    });

    // A true division, as NeMo does, rather than a multiplication by the reciprocal.
    parallel_for(team, nv, 64, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            float* row = out + t * n_mels;
            for (int m = 0; m < n_mels; ++m) row[m] = (row[m] - mean[m]) / stdev[m];
        }
    });
}

}  // namespace pk
