#include "model/diar/segment_tracker.h"

#include <algorithm>
#include <cmath>

namespace pk {

namespace {

// Unit index -> seconds as NeMo writes them: i * 0.01 (a double), rounded to 2 decimals.
double unit_time(int64_t unit) { return std::round(static_cast<double>(unit) * 0.01 * 100.0) / 100.0; }

void sort_segments(std::vector<DiarSegment>& s, size_t from) {
    std::sort(s.begin() + static_cast<std::ptrdiff_t>(from), s.end(),
              [](const DiarSegment& a, const DiarSegment& b) {
                  return a.start != b.start ? a.start < b.start : a.speaker < b.speaker;
              });
}

}  // namespace

DiarSegmentTracker::DiarSegmentTracker(int n_spk, int upsample, float onset, float offset)
    : n_spk_(n_spk), upsample_(upsample), onset_(onset), offset_(offset), speech_(n_spk, 0), start_(n_spk, 0) {}

void DiarSegmentTracker::push(const float* probs, int64_t n, std::vector<DiarSegment>& closed) {
    const size_t first = closed.size();
    for (int64_t f = 0; f < n; ++f, ++frames_) {
        for (int s = 0; s < n_spk_; ++s) {
            const float p = probs[f * n_spk_ + s];
            // NeMo walks the repeated 10 ms units one by one; with offset > onset a unit can
            // close a segment and the next reopen it, so the walk is literal.
            for (int u = 0; u < upsample_; ++u) {
                const int64_t unit = frames_ * upsample_ + u;
                if (speech_[s]) {
                    if (p < offset_) {
                        closed.push_back({s, unit_time(start_[s]), unit_time(unit)});
                        speech_[s] = 0;
                    }
                } else if (p > onset_) {
                    start_[s] = unit;
                    speech_[s] = 1;
                }
            }
        }
    }
    sort_segments(closed, first);
}

void DiarSegmentTracker::finish(std::vector<DiarSegment>& closed) {
    const size_t first = closed.size();
    const int64_t last = frames_ * upsample_ - 1;
    for (int s = 0; s < n_spk_; ++s) {
        if (!speech_[s]) continue;
        closed.push_back({s, unit_time(start_[s]), unit_time(last)});
        speech_[s] = 0;
    }
    sort_segments(closed, first);
}

std::vector<DiarSegment> DiarSegmentTracker::active() const {
    std::vector<DiarSegment> out;
    for (int s = 0; s < n_spk_; ++s)
        if (speech_[s]) out.push_back({s, unit_time(start_[s]), unit_time(frames_ * upsample_)});
    sort_segments(out, 0);
    return out;
}

}  // namespace pk
