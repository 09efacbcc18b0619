// Whether the calling thread is inside one of the caller's progress callbacks. A request runs
// its callback with its backend leased; a call from the callback that waits for that backend
// (set_threads) would wait for itself, so such calls check this and refuse instead.
#pragma once

namespace pk::capi {

// Marks the calling thread as inside a callback for the scope's lifetime (scopes nest).
class CallbackScope {
public:
    CallbackScope() { ++depth(); }
    ~CallbackScope() { --depth(); }
    CallbackScope(const CallbackScope&) = delete;
    CallbackScope& operator=(const CallbackScope&) = delete;

    static bool active() { return depth() > 0; }

private:
    static int& depth() {
        thread_local int d = 0;
        return d;
    }
};

}  // namespace pk::capi
