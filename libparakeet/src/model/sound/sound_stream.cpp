#include "model/sound/sound_stream.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/errors.h"
#include "model/sound/top_classes.h"

namespace pk {

void validate_sound_options(const SoundOptions& o, int n_classes) {
    const auto bad = [](const std::string& why) { throw InvalidArgument("invalid sound options: " + why); };
    if (!(o.hop_sec >= 0.2f)) bad("hop_sec must be at least 0.2");
    if (!(o.window_sec >= o.hop_sec && o.window_sec <= 10.f)) bad("window_sec must be between hop_sec and 10");
    if (!(o.off_threshold >= 0.f && o.off_threshold <= o.on_threshold && o.on_threshold <= 1.f))
        bad("thresholds must satisfy 0 <= off_threshold <= on_threshold <= 1");
    if (!(o.min_duration_sec >= 0.f)) bad("min_duration_sec must not be negative");
    if (o.top_k < 0 || o.top_k > n_classes) bad("top_k must be between 0 and the number of classes");
}

SoundStream::SoundStream(SoundScorer scorer, int n_classes, int sample_rate, const SoundOptions& o)
    : scorer_(std::move(scorer)), n_classes_(n_classes), rate_(sample_rate), o_(o),
      window_(std::llround(static_cast<double>(o.window_sec) * sample_rate)),
      hop_(std::llround(static_cast<double>(o.hop_sec) * sample_rate)), next_end_(hop_),
      open_(static_cast<size_t>(n_classes), false), current_(static_cast<size_t>(n_classes)) {
    validate_sound_options(o, n_classes);
}

std::vector<SoundSegment> SoundStream::feed(const float* samples, int64_t n, bool is_last) {
    if ((samples == nullptr && n > 0) || n < 0) throw InvalidArgument("invalid samples buffer");
    if (finished_) throw InvalidArgument("stream already finished");
    std::vector<SoundSegment> closed;
    for (int64_t i = 0; i < n;) {
        // Take samples up to the next window end, score it when reached.
        const int64_t take = std::min(n - i, next_end_ - total_);
        recent_.insert(recent_.end(), samples + i, samples + i + take);
        if (static_cast<int64_t>(recent_.size()) > window_)
            recent_.erase(recent_.begin(), recent_.end() - window_);
        total_ += take;
        i += take;
        if (total_ == next_end_) {
            score_window(std::max<int64_t>(0, total_ - window_), total_, closed);
            next_end_ += hop_;
        }
    }
    if (is_last) {
        finished_ = true;
        if (total_ - scored_until_ >= std::llround(kMinTailSec * rate_))
            score_window(std::max<int64_t>(0, total_ - window_), total_, closed);
        const double now = static_cast<double>(total_) / rate_;
        for (int c = 0; c < n_classes_; ++c) {
            if (!open_[c]) continue;
            open_[c] = false;
            SoundSegment s = current_[c];
            s.end = now;
            if (s.end - s.start >= o_.min_duration_sec) closed.push_back(s);
        }
    }
    return closed;
}

void SoundStream::score_window(int64_t begin, int64_t end, std::vector<SoundSegment>& closed) {
    // recent_ ends at `end` and holds at least end - begin samples.
    std::vector<float> scores;
    try {
        scores = scorer_(recent_.data() + recent_.size() - (end - begin), end - begin);
    } catch (const Error& e) {
        throw Error(e.code(), std::string("sound scorer failed: ") + e.what());
    }
    if (static_cast<int>(scores.size()) != n_classes_)
        throw Error(ErrorCode::Internal, "sound scorer failed: " + std::to_string(scores.size()) + " scores for " +
                                             std::to_string(n_classes_) + " classes");
    scored_until_ = end;
    const double ws = static_cast<double>(begin) / rate_, we = static_cast<double>(end) / rate_, hop = o_.hop_sec;
    for (int c = 0; c < n_classes_; ++c) {
        const float p = scores[static_cast<size_t>(c)];
        if (!open_[c] && p >= o_.on_threshold) {
            open_[c] = true;
            current_[c] = SoundSegment{c, std::max(ws, we - hop), we, p};
        } else if (open_[c] && p < o_.off_threshold) {
            open_[c] = false;
            SoundSegment s = current_[c];
            s.end = std::min(ws + hop, we);
            if (s.end - s.start >= o_.min_duration_sec) closed.push_back(s);
        } else if (open_[c]) {
            current_[c].peak = std::max(current_[c].peak, p);
            current_[c].end = we;
        }
    }
    if (o_.top_k == 0) return;
    ScoredWindow w{ws, we, {}};
    for (int c : top_classes(scores, o_.top_k)) w.top.emplace_back(c, scores[static_cast<size_t>(c)]);
    queue_.push_back(std::move(w));
}

std::vector<SoundSegment> SoundStream::active() const {
    std::vector<SoundSegment> out;
    for (int c = 0; c < n_classes_; ++c)
        if (open_[c]) out.push_back(current_[c]);
    return out;
}

std::vector<ScoredWindow> SoundStream::drain_scores() {
    std::vector<ScoredWindow> out(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
    queue_.clear();
    return out;
}

}  // namespace pk
