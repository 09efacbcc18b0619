// parakeet_stream, the C ABI's stream handle: a pk::LiveStream (buffered or cache-aware) with the lock that
// serialises calls on one stream, the queue of <EOU>/<EOB> events, and a count of the calls
// inside it, so that stream_free can refuse a stream another thread is still using; and the
// stream group it is in, whose batcher then runs its chunks (capi/stream_group.h).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>

#include "model/stream/live_stream.h"
#include "parakeet_capi.h"

struct parakeet_stream {
    parakeet_ctx* ctx = nullptr;
    std::mutex mu;  // one call at a time on a stream
    std::unique_ptr<pk::LiveStream> stream;
    parakeet_stream_group* group = nullptr;  // the group it is in (under mu), or none
    std::deque<parakeet_stream_event> events;  // decoded, not yet drained
    // Calls that have entered and not yet returned (counted before they wait for `mu`).
    std::atomic<int> calls_in_flight{0};
};

namespace pk::capi {

// The number of calls running on `s` now (for tests, which wait for a call to be inside).
int stream_calls_in_flight(const parakeet_stream* s);

}  // namespace pk::capi
