// RequestBatcher: the scheduler that lets concurrent offline transcriptions of one model share
// their encoder pass and greedy decode (OfflineBatch), as StreamBatcher does for live streams.
// It starts no thread: a transcribe call queues its request and waits; the oldest waiting call
// runs an OfflineBatch of the queue (the first max_batch requests, oldest first) on a backend
// of the model's pool when
//   * the queue holds max_batch requests, or
//   * fewer batches run than the model has backends (a backend is free) and either the
//     request is the only one in the batcher or the oldest has waited max_wait.
// So a lone request runs at once, at its latency alone; with a backend free, requests wait at
// most max_wait for batch-mates; and those that arrive while every backend is busy gather into
// the next batch (the backends' work, not a timer, paces them). Batches on different backends
// run at once.
//
// Requests that OfflineBatch does not take (beam search, hotwords) and long ones (over
// kMaxBatchedSeconds of audio: a cap on a batch's memory, docs/performance.md "Batched
// uploads") run alone at once through Model::transcribe. A request's progress callback is told 0 before it queues and
// 1 when its transcript is ready (it may cancel then); the batch itself is not cancelled.
//
// Every transcript is bitwise what Model::transcribe gives the request alone. A request's own
// errors (its audio, its options) stay its own; an error of a batch's shared work is every one
// of its requests' error. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "model/batch_queue.h"
#include "model/offline/offline_batch.h"

namespace pk {

class RequestBatcher {
public:
    // Throws InvalidArgument for max_batch < 1 or max_wait_ms < 0.
    RequestBatcher(const Model& model, int max_batch, int max_wait_ms);

    // Model::transcribe(samples, n, sample_rate, options), in a batch when it can be.
    Transcript transcribe(const float* samples, int64_t n, int sample_rate, const RequestOptions& options);

    // What the batcher did: how many batches ran of each size, how long their requests waited
    // in the queue, and how many requests ran alone because they could not be batched.
    struct Stats : BatchStats {
        using BatchStats::BatchStats;
        int64_t unbatched = 0;
    };
    Stats stats() const;

    const Model& model() const { return model_; }
    int max_batch() const { return limits_.max_batch; }
    int max_wait_ms() const { return static_cast<int>(limits_.max_wait.count()); }

    // Longer requests run alone.
    static constexpr double kMaxBatchedSeconds = 30.0;
    // Whether a request of `n` samples at `sample_rate` with these options runs in a batch:
    // OfflineBatch takes its options and it is at most kMaxBatchedSeconds long (the batch
    // calls group their clips by the same rule, model/offline/request_set.h).
    static bool runs_batched(const RequestOptions& options, int64_t n, int sample_rate);

private:
    struct Waiter;
    // Whether the queue's oldest waiter should run a batch now (under mu_): the rules above.
    bool batch_due(BatchClock::time_point now) const;
    // Runs a batch of the queue's oldest requests (called with mu_ locked; unlocks it meanwhile).
    void run_batch(std::unique_lock<std::mutex>& lock);

    const Model& model_;
    const OfflineBatch batch_;
    const BatchLimits limits_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Waiter*> queue_;  // waiting, oldest first
    int running_ = 0;            // batches running now
    int in_flight_ = 0;          // batched requests queued or running
    Stats stats_;
};

}  // namespace pk
