#include "model/vad/speech_segmenter.h"

#include <algorithm>
#include <cmath>

namespace pk {

namespace {

// Silero counts in milliseconds; options come in seconds. A value that is a whole number of
// milliseconds up to rounding (0.03 s) is taken as that many, so the sample counts are
// Silero's own doubles (16000 * 30 / 1000 = 480 exactly).
double samples_of(double seconds, int rate) {
    double ms = seconds * 1000.0;
    const double whole = std::round(ms);
    if (std::fabs(ms - whole) < 1e-6) ms = whole;
    return rate * ms / 1000.0;
}

}  // namespace

SegmenterParams SegmenterParams::from(const VadOptions& o, int rate, int window) {
    SegmenterParams p;
    p.window = window;
    p.threshold = o.threshold;
    p.neg_threshold = o.effective_neg_threshold();
    p.min_speech = samples_of(o.min_speech, rate);
    p.min_silence = samples_of(o.min_pause, rate);
    p.pad = samples_of(o.speech_pad, rate);
    const double max_s = o.effective_max_segment();
    p.max_speech = std::isinf(max_s) ? max_s : rate * max_s - window - 2 * p.pad;
    p.min_silence_at_max_speech = rate * 98 / 1000.0;
    return p;
}

void SpeechSegmenter::close_at(int64_t end, bool check_length) {
    if (!check_length || static_cast<double>(end - start_) > p_.min_speech) speeches_.push_back({start_, end});
    has_start_ = false;
}

// One iteration of get_speech_timestamps_from_probs' loop (the same branches in the same order).
void SpeechSegmenter::push(float prob) {
    const int64_t cur = static_cast<int64_t>(p_.window) * frames_++;
    const bool speech = prob >= p_.threshold;
    if (speech) last_speech_frame_ = cur;

    if (speech && temp_end_ != 0) {
        const int64_t sil = cur - temp_end_;
        if (static_cast<double>(sil) > p_.min_silence_at_max_speech) possible_ends_.push_back({temp_end_, sil});
        temp_end_ = 0;
        if (next_start_ < prev_end_) next_start_ = cur;
    }
    if (speech && !triggered_) {
        triggered_ = true;
        has_start_ = true;
        start_ = cur;
        return;
    }
    if (triggered_ && has_start_ && static_cast<double>(cur - start_) > p_.max_speech) {
        if (!possible_ends_.empty()) {
            // The longest silence of the segment; the first of equal ones, as Python's max().
            auto best = possible_ends_.begin();
            for (auto it = possible_ends_.begin(); it != possible_ends_.end(); ++it)
                if (it->second > best->second) best = it;
            prev_end_ = best->first;
            const int64_t dur = best->second;
            close_at(prev_end_, false);
            next_start_ = prev_end_ + dur;
            if (next_start_ < prev_end_ + cur) {
                has_start_ = true;
                start_ = next_start_;
            } else {
                triggered_ = false;
            }
            prev_end_ = next_start_ = temp_end_ = 0;
            possible_ends_.clear();
        } else {
            // No silence to cut at (prev_end is always 0 with use_max_poss_sil_at_max_speech):
            // a hard cut here.
            close_at(cur, false);
            prev_end_ = next_start_ = temp_end_ = 0;
            triggered_ = false;
            possible_ends_.clear();
            return;
        }
    }
    if (prob < p_.neg_threshold && triggered_) {
        if (temp_end_ == 0) temp_end_ = cur;
        const int64_t sil_now = cur - temp_end_;
        if (static_cast<double>(sil_now) < p_.min_silence) return;
        if (has_start_) {
            close_at(temp_end_, true);
        }
        prev_end_ = next_start_ = temp_end_ = 0;
        triggered_ = false;
        possible_ends_.clear();
    }
}

void SpeechSegmenter::finish(int64_t audio_length) {
    if (has_start_ && static_cast<double>(audio_length - start_) > p_.min_speech)
        speeches_.push_back({start_, audio_length});
    has_start_ = false;
    triggered_ = false;
}

bool SpeechSegmenter::open_certain() const {
    return open() && last_speech_frame_ >= start_ &&
           static_cast<double>(last_speech_frame_ + p_.window - start_) > p_.min_speech;
}

int64_t SpeechSegmenter::padded_start(size_t i) const {
    const int64_t s = speeches_[i].start;
    if (i > 0) {
        const int64_t gap = s - speeches_[i - 1].end;
        if (static_cast<double>(gap) < 2 * p_.pad) return std::max<int64_t>(0, s - gap / 2);
    }
    return static_cast<int64_t>(std::max(0.0, static_cast<double>(s) - p_.pad));
}

int64_t SpeechSegmenter::padded_end(size_t i, int64_t next_start, int64_t audio_length) const {
    const int64_t e = speeches_[i].end;
    if (next_start >= 0) {
        const int64_t gap = next_start - e;
        if (static_cast<double>(gap) < 2 * p_.pad) return e + gap / 2;
    }
    return static_cast<int64_t>(std::min(static_cast<double>(audio_length), static_cast<double>(e) + p_.pad));
}

std::vector<SampleSpan> SpeechSegmenter::padded(int64_t audio_length) const {
    std::vector<SampleSpan> out(speeches_.size());
    for (size_t i = 0; i < speeches_.size(); ++i) {
        out[i].start = padded_start(i);
        out[i].end = padded_end(i, i + 1 < speeches_.size() ? speeches_[i + 1].start : -1, audio_length);
    }
    return out;
}

}  // namespace pk
