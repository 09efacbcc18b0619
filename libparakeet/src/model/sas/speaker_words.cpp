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

std::vector<int> utterance_numbers(const std::vector<TranscriptWord>& words, const std::vector<int>& speakers) {
    if (words.size() != speakers.size()) throw std::logic_error("utterance_numbers: one speaker per word");
    std::vector<int> out;
    out.reserve(words.size());
    double run_end = 0.0;  // the latest end of the current utterance's words
    for (size_t i = 0; i < words.size(); ++i) {
        const TranscriptWord& w = words[i];
        const bool joins = i > 0 && speakers[i - 1] == speakers[i] && w.start_sec - run_end <= kSasMaxGapSec + kEps;
        out.push_back(i == 0 ? 0 : out.back() + (joins ? 0 : 1));
        run_end = joins ? std::max(run_end, w.end_sec) : w.end_sec;
    }
    return out;
}

std::vector<SasItem> speaker_utterances(const std::vector<TranscriptWord>& words, const std::vector<int>& speakers) {
    const std::vector<int> number = utterance_numbers(words, speakers);
    std::vector<SasItem> out;
    for (size_t i = 0; i < words.size(); ++i) {
        const TranscriptWord& w = words[i];
        if (static_cast<size_t>(number[i]) < out.size()) {
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
