// The sound stream: live sound events from a tagger's scores on sliding windows, with
// parakeet.cpp's rules (its src/sound_stream.cpp, ABI 8).
//
// Windows end every hop: the window ending at e covers [max(0, e - window), e], so the first
// ones are 0-1, 0-2, 0-3 s, then 1-4 s (at the defaults). Each is scored once (all classes).
//   - A class opens when its score reaches on_threshold: start = max(ws, we - hop); its peak
//     is tracked while it is open.
//   - An open class closes when its score falls below off_threshold: end = min(ws + hop, we).
//     A segment shorter than min_duration is dropped.
//   - is_last: a tail window [max(0, now - window), now] is scored when at least 0.16 s is
//     unscored, then every open class closes at now.
// Each scored window also queues its top_k classes for drain_scores().
//
// The scorer is an interface, so the rules run (and are tested) apart from the network.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace pk {

struct SoundOptions {
    float window_sec = 3.f, hop_sec = 1.f;
    float on_threshold = 0.4f, off_threshold = 0.3f, min_duration_sec = 0.3f;
    int top_k = 5;
};

// Throws InvalidArgument "invalid sound options: ..." unless hop >= 0.2, hop <= window <= 10,
// 0 <= off <= on <= 1, min_duration >= 0 and 0 <= top_k <= n_classes.
void validate_sound_options(const SoundOptions& o, int n_classes);

struct SoundSegment {
    int class_index = 0;
    double start = 0, end = 0;  // seconds from the stream's start
    float peak = 0;
};

struct ScoredWindow {
    double start = 0, end = 0;
    std::vector<std::pair<int, float>> top;  // (class, score), highest first, at most top_k
};

// All class scores of a window of mono samples at the stream's rate.
using SoundScorer = std::function<std::vector<float>(const float* samples, int64_t n)>;

class SoundStream {
public:
    // The smallest unscored tail is_last still scores.
    static constexpr double kMinTailSec = 0.16;

    SoundStream(SoundScorer scorer, int n_classes, int sample_rate, const SoundOptions& o);

    // Appends n samples and scores every window that now ends; with is_last also the tail, then
    // closes what is open. Returns the segments closed by this call, in closing order (by class
    // within a window). Throws InvalidArgument after the last feed ("stream already finished").
    std::vector<SoundSegment> feed(const float* samples, int64_t n, bool is_last);
    // The open classes, by class; end is the end of the last scored window.
    std::vector<SoundSegment> active() const;
    // The scored windows queued since the last drain, oldest first (and empties the queue).
    std::vector<ScoredWindow> drain_scores();

private:
    void score_window(int64_t begin, int64_t end, std::vector<SoundSegment>& closed);

    SoundScorer scorer_;
    int n_classes_, rate_;
    SoundOptions o_;
    int64_t window_, hop_;       // in samples
    std::vector<float> recent_;  // the last window_ samples (fewer at the start)
    int64_t total_ = 0;          // samples fed
    int64_t next_end_;           // where the next regular window ends
    int64_t scored_until_ = 0;   // end of the last scored window
    bool finished_ = false;
    std::vector<bool> open_;
    std::vector<SoundSegment> current_;  // per class, valid while open_
    std::deque<ScoredWindow> queue_;
};

}  // namespace pk
