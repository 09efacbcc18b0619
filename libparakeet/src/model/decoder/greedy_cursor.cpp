#include "model/decoder/greedy_cursor.h"

#include "model/decoder/argmax.h"

namespace pk {

GreedyCursor::GreedyCursor(const GreedyOptions& options, int n_frames, int first_frame)
    : o_(options), n_frames_(n_frames), tdt_(!options.durations.empty()), t_(first_frame) {}

void GreedyCursor::end_full_visit() {
    if (o_.max_symbols > 0 && symbols_ == o_.max_symbols) {
        t_ += 1;
        symbols_ = 0;
    }
}

bool GreedyCursor::advance(const float* logits, int token, std::vector<TranscriptToken>& out) {
    const int n_tokens = o_.blank_id + 1;
    const bool emitted = token != o_.blank_id;
    if (!tdt_) {  // RNN-T: a blank ends the frame's visit
        if (!emitted) {
            t_ += 1;
            symbols_ = 0;
            return false;
        }
        out.push_back({token, t_, 1, max_prob_confidence(logits, n_tokens, o_.confidence)});
        ++symbols_;
        end_full_visit();
        return true;
    }
    const int n_durations = static_cast<int>(o_.durations.size());
    const int duration = o_.durations[static_cast<size_t>(argmax(logits + n_tokens, n_durations))];
    if (!emitted && duration == 0) {  // see greedy_tdt.h: NeMo's repeats end here
        t_ += 1;
        symbols_ = 0;
        return false;
    }
    if (emitted) out.push_back({token, t_, duration, max_prob_confidence(logits, n_tokens, o_.confidence)});
    ++symbols_;
    t_ += duration;
    if (duration != 0) {
        const bool full = o_.max_symbols > 0 && symbols_ == o_.max_symbols;
        if (full && o_.tdt_loop == TdtLoop::Greedy) t_ += 1;
        symbols_ = 0;
    } else {
        end_full_visit();  // the visit goes on at the same frame unless it is full
    }
    return emitted;
}

}  // namespace pk
