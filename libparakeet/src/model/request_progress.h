// RequestProgress: turns the stages of one request into one fraction-done figure for the
// caller's ProgressFn, and into a Cancelled exception when the callback asks to stop.
//
// Reports come from the request's own thread between kernel calls (never from inside a
// thread-team job), so a cancellation unwinds with no worker mid-job; the arena scopes and
// the backend lease are RAII and are given back on the way out.
#pragma once

#include "model/request_options.h"

namespace pk {

class RequestProgress {
public:
    explicit RequestProgress(ProgressFn fn) : fn_(std::move(fn)) {}

    bool enabled() const { return static_cast<bool>(fn_); }
    // The whole request is `fraction` done (clamped to [0, 1], never decreasing). Throws
    // Cancelled when the callback returns false.
    void report(double fraction);

private:
    ProgressFn fn_;
    double last_ = 0.0;
};

// A stage of a request: the part [begin, end] of the whole. `at(f)` reports that the stage is
// f done. A default-constructed span reports nothing (for callers without progress).
struct ProgressSpan {
    RequestProgress* progress = nullptr;
    double begin = 0.0;
    double end = 1.0;

    void at(double f) const {
        if (progress != nullptr && progress->enabled()) progress->report(begin + (end - begin) * f);
    }
    // The part [f0, f1] of this stage, as a span of its own.
    ProgressSpan sub(double f0, double f1) const {
        return {progress, begin + (end - begin) * f0, begin + (end - begin) * f1};
    }
};

}  // namespace pk
