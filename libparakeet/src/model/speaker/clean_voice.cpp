#include "model/speaker/clean_voice.h"

#include <algorithm>

namespace pk::speaker {

std::vector<TimeSpan> clean_voice(const std::vector<DiarSegment>& segments, int slot, const CleanVoiceRules& rules) {
    std::vector<TimeSpan> own, others;
    for (const DiarSegment& s : segments) (s.speaker == slot ? own : others).push_back({s.start, s.end});
    std::sort(others.begin(), others.end(), [](const TimeSpan& a, const TimeSpan& b) { return a.start < b.start; });
    std::sort(own.begin(), own.end(), [](const TimeSpan& a, const TimeSpan& b) { return a.start < b.start; });

    // Each own span minus the other slots' spans, pieces shorter than min_piece_sec dropped.
    std::vector<TimeSpan> clean;
    for (const TimeSpan& span : own) {
        double at = span.start;
        for (const TimeSpan& o : others) {
            if (o.end <= at || o.start >= span.end) continue;
            if (o.start - at >= rules.min_piece_sec) clean.push_back({at, o.start});
            at = std::max(at, o.end);
        }
        if (span.end - at >= rules.min_piece_sec) clean.push_back({at, span.end});
    }

    // The newest max_voice_sec: walk back from the last piece.
    std::vector<TimeSpan> kept;
    double total = 0;
    for (auto it = clean.rbegin(); it != clean.rend() && total < rules.max_voice_sec; ++it) {
        TimeSpan piece = *it;
        piece.start = std::max(piece.start, piece.end - (rules.max_voice_sec - total));
        total += piece.end - piece.start;
        kept.push_back(piece);
    }
    std::reverse(kept.begin(), kept.end());
    return kept;
}

double total_seconds(const std::vector<TimeSpan>& spans) {
    double total = 0;
    for (const TimeSpan& s : spans) total += s.end - s.start;
    return total;
}

}  // namespace pk::speaker
