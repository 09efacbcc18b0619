#include "model/sas/speaker_words.h"

#include <algorithm>
#include <stdexcept>

namespace pk {

namespace {

constexpr double kEps = 1e-9;

int speaker_of(const TranscriptWord& w, const std::vector<DiarSegment>& segments) {
    int best = -1;
    double best_overlap = kEps;  // an overlap must be positive (beyond the tolerance)
    for (const DiarSegment& s : segments) {
        const double overlap = std::min(w.end_sec, s.end) - std::max(w.start_sec, s.start);
        if (overlap > best_overlap + (best < 0 ? 0.0 : kEps)) {
            best_overlap = overlap;
            best = s.speaker;
        }
    }
    if (best >= 0) return best;
    double best_gap = kSasMaxGapSec + kEps;
    for (const DiarSegment& s : segments) {
        // 0 for a segment around a zero-length word (no overlap, but no distance either).
        const double gap = std::max({0.0, s.start - w.end_sec, w.start_sec - s.end});
        if (gap <= best_gap + (best < 0 ? 0.0 : kEps)) {  // "<=": the later of equal gaps wins
            best_gap = std::min(best_gap, gap);
            best = s.speaker;
        }
    }
    return best;
}

}  // namespace

std::vector<int> word_speakers(const std::vector<TranscriptWord>& words, const std::vector<DiarSegment>& segments) {
    std::vector<int> out;
    out.reserve(words.size());
    for (const TranscriptWord& w : words) out.push_back(speaker_of(w, segments));
    return out;
}

std::vector<SasItem> speaker_utterances(const std::vector<TranscriptWord>& words, const std::vector<int>& speakers) {
    if (words.size() != speakers.size()) throw std::logic_error("speaker_utterances: one speaker per word");
    std::vector<SasItem> out;
    for (size_t i = 0; i < words.size(); ++i) {
        const TranscriptWord& w = words[i];
        const bool joins = !out.empty() && out.back().speaker == speakers[i] &&
                           w.start_sec - out.back().end <= kSasMaxGapSec + kEps;
        if (joins) {
            SasItem& u = out.back();
            u.text += " " + w.text;
            u.end = std::max(u.end, w.end_sec);
            u.confidence = std::min(u.confidence, w.confidence);
        } else {
            out.push_back(SasItem{speakers[i], w.text, w.start_sec, w.end_sec, w.confidence});
        }
    }
    return out;
}

}  // namespace pk
