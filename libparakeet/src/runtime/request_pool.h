// RequestPool: the backends a loaded model serves its requests on, for every model kind (ASR,
// diarization): none (the process-wide default backend), or a BackendPool of K, resized at
// run time. Requests copy the pool's pointer, so a replaced pool lives until its last request
// has finished.
#pragma once

#include <memory>
#include <mutex>

#include "runtime/backend_pool.h"

namespace pk {

class RequestPool {
public:
    // `threads`: the model's own thread budget (LoadOptions::threads), 0 for the default.
    explicit RequestPool(int threads = 0) : threads_(threads) {}

    // Turns on a pool of `backends` backends with `threads_each` threads each (<= 0: the
    // thread budget divided among them, at least 1 each); backends <= 1 removes the pool
    // (requests then run on the process-wide default backend) unless the model has a thread
    // budget of its own, which then gets one backend of that many threads. Requests already
    // running finish on the pool they started on. Returns the number of backends now in use.
    int set_concurrency(int backends, int threads_each);
    // The threads a request may use: the model's budget, or else default_thread_count().
    int thread_budget() const;
    // Backends serving requests at once: the pool's size, 1 without a pool.
    int backends() const;
    // Sum of the pool's arenas (0 without a pool).
    size_t working_set_bytes() const;

    // A backend for one unit of work on the calling thread: the pool's (waiting for a free
    // one) or the process-wide default. Held only while it computes.
    BackendLease lease() const { return BackendLease(snapshot()); }

    // Largest pool size set_concurrency accepts.
    static constexpr int kMaxBackends = 64;

private:
    std::shared_ptr<BackendPool> snapshot() const;

    int threads_ = 0;
    mutable std::mutex mu_;
    std::shared_ptr<BackendPool> pool_;
};

}  // namespace pk
