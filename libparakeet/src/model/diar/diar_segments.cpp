#include "model/diar/diar_segments.h"

#include <algorithm>
#include <cmath>

namespace pk {
namespace {

constexpr double kUnitSec = 0.01;  // NeMo's frame_length_in_sec

struct Span {
    float start, end;  // float32, as NeMo's segment tensors
};

// merge_overlap_segment: sorted by start, a segment is joined to the next one when its end
// reaches the next start (adjacent pairs only, as NeMo compares them).
std::vector<Span> merge_overlaps(std::vector<Span> s) {
    if (s.size() <= 1) return s;
    std::stable_sort(s.begin(), s.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    std::vector<Span> out;
    for (size_t k = 0; k < s.size(); ++k) {
        const bool joined_to_previous = k > 0 && s[k - 1].end >= s[k].start;
        const bool joined_to_next = k + 1 < s.size() && s[k].end >= s[k + 1].start;
        if (!joined_to_previous) out.push_back({s[k].start, 0.0f});
        if (!joined_to_next) out.back().end = s[k].end;
    }
    return out;
}

// binarization() over one speaker's 10 ms units.
std::vector<Span> binarize(const std::vector<float>& p, const DiarPostProcessing& post) {
    const float onset = static_cast<float>(post.onset), offset = static_cast<float>(post.offset);
    std::vector<Span> out;
    bool speech = false;
    double start = 0.0;
    const int64_t n = static_cast<int64_t>(p.size());
    for (int64_t i = 0; i < n; ++i) {
        const double t = static_cast<double>(i) * kUnitSec;
        if (speech) {
            if (p[static_cast<size_t>(i)] < offset) {
                const double lo = std::max(0.0, start - post.pad_onset), hi = t + post.pad_offset;
                if (hi > lo) out.push_back({static_cast<float>(lo), static_cast<float>(hi)});
                start = t;
                speech = false;
            }
        } else if (p[static_cast<size_t>(i)] > onset) {
            start = t;
            speech = true;
        }
    }
    if (speech) {  // open at the end: closed at the last unit's index
        const double last = static_cast<double>(std::max<int64_t>(n - 1, 0)) * kUnitSec;
        out.push_back({static_cast<float>(std::max(0.0, start - post.pad_onset)),
                       static_cast<float>(last + post.pad_offset)});
    }
    return merge_overlaps(std::move(out));
}

// filtering() with filter_speech_first: drop short speech, then fill short gaps.
std::vector<Span> filter(std::vector<Span> s, const DiarPostProcessing& post) {
    if (s.empty()) return s;
    const float on = static_cast<float>(post.min_duration_on), off = static_cast<float>(post.min_duration_off);
    if (post.min_duration_on > 0.0) {
        s.erase(std::remove_if(s.begin(), s.end(), [&](const Span& x) { return !(x.end - x.start >= on); }), s.end());
    }
    if (post.min_duration_off > 0.0 && s.size() > 1) {
        std::stable_sort(s.begin(), s.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
        std::vector<Span> with_gaps = s;
        for (size_t k = 0; k + 1 < s.size(); ++k) {
            const Span gap{s[k].end, s[k + 1].start};
            if (!(gap.end - gap.start >= off)) with_gaps.push_back(gap);
        }
        s = merge_overlaps(std::move(with_gaps));
    }
    return s;
}

}  // namespace

double round_to_diar_unit(float v) { return std::round(static_cast<double>(v) / kUnitSec) * kUnitSec; }

std::vector<DiarSegment> speaker_segments(const float* probs, int64_t frames, int n_speakers, int units_per_frame,
                                          const DiarPostProcessing& post) {
    std::vector<DiarSegment> out;
    std::vector<float> units(static_cast<size_t>(std::max<int64_t>(frames, 0) * units_per_frame));
    for (int s = 0; s < n_speakers; ++s) {
        for (int64_t f = 0; f < frames; ++f)
            std::fill_n(units.begin() + f * units_per_frame, units_per_frame, probs[f * n_speakers + s]);
        for (const Span& x : filter(binarize(units, post), post))
            out.push_back({s, round_to_diar_unit(x.start), round_to_diar_unit(x.end)});
    }
    std::stable_sort(out.begin(), out.end(), [](const DiarSegment& a, const DiarSegment& b) {
        return a.start != b.start ? a.start < b.start : a.speaker < b.speaker;
    });
    return out;
}

}  // namespace pk
