#include "model/sas/sas_committer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace pk {

namespace {

// Lower case, letters and digits only (bytes above ASCII are kept: UTF-8 letters).
std::string normalized(const std::string& text) {
    std::string out;
    for (unsigned char c : text) {
        if (c >= 0x80 || std::isalnum(c)) out.push_back(static_cast<char>(std::tolower(c)));
    }
    return out;
}

}  // namespace

SasCommitter::SasCommitter(int sample_rate, Transcriber transcribe)
    : rate_(sample_rate), transcribe_(std::move(transcribe)) {}

void SasCommitter::append(const float* samples, int64_t n) { audio_.insert(audio_.end(), samples, samples + n); }

void SasCommitter::release_to(int64_t s) {
    const int64_t drop = std::min<int64_t>(s - start_, static_cast<int64_t>(audio_.size()));
    if (drop <= 0) return;
    audio_.erase(audio_.begin(), audio_.begin() + drop);
    start_ += drop;
}

std::vector<TranscriptWord> SasCommitter::commit(double diarized_edge_sec, bool last) {
    std::vector<TranscriptWord> out;
    for (;;) {
        const int64_t received = start_ + static_cast<int64_t>(audio_.size());
        const int64_t edge = last ? received
                                  : std::min(received, static_cast<int64_t>(std::floor(diarized_edge_sec * rate_)));
        const int64_t n = edge - start_;
        const double window_sec = static_cast<double>(n) / rate_;
        if (n <= 0 || (!last && window_sec < kWindowSec)) return out;
        // The same window as a try that released nothing gives the same words: wait for more.
        if (!last && start_ == stalled_start_ && edge == stalled_edge_) return out;
        const double t0 = static_cast<double>(start_) / rate_;
        std::vector<TranscriptWord> words = transcribe_(audio_.data(), n);
        for (TranscriptWord& w : words) {
            w.start_sec += t0;
            w.end_sec += t0;
        }
        const bool all = last || window_sec >= kMaxWindowSec;
        const double limit = all ? std::numeric_limits<double>::infinity() : t0 + window_sec - kHoldSec;
        size_t k = 0;  // words [0, k) commit
        while (k < words.size() && words[k].end_sec <= limit + 1e-9) ++k;
        size_t first = 0;
        if (k > 0 && have_last_ && normalized(words[0].text) == normalized(last_.text) &&
            std::fabs(words[0].start_sec - last_.start_sec) <= kRepeatSec + 1e-9)
            first = 1;
        const int64_t before = start_;
        if (k > 0) {
            const double resume = words[k - 1].end_sec;
            for (size_t i = first; i < k; ++i) out.push_back(words[i]);
            last_ = words[k - 1];
            have_last_ = true;
            release_to(std::max(start_ + 1, static_cast<int64_t>(std::llround(resume * rate_))));
        } else if (all) {  // no words at all in what remains
            release_to(edge);
        } else {
            const double heard = words.empty() ? limit : std::min(words[0].start_sec, limit);
            release_to(static_cast<int64_t>(std::floor((heard - kReleaseBackSec) * rate_)));
        }
        if (all) {
            if (last) release_to(received);
            if (last || start_ == before) return out;
        }
        if (start_ == before) {  // nothing to release: wait for more audio
            stalled_start_ = start_;
            stalled_edge_ = edge;
            return out;
        }
    }
}

}  // namespace pk
