// StreamBatcher: the scheduler that lets concurrent feeds of the live streams of one model share
// their encoder passes: the steps of cache-aware streams, the windows of buffered streams (the
// model decides which: run_stream_batch). It starts no thread: a feed whose stream has a chunk
// ready queues the stream and waits; the oldest waiting feed runs a batch for the queue (the
// first max_batch streams, oldest first) on a backend of the model's pool when
//   * the queue holds max_batch streams, or every member stream (nothing else could join), or
//   * it has waited max_wait;
// and a backend is free: the batch is taken from the queue once the backend is leased, so
// under load, when the backends are the bottleneck, batches fill up instead of piling up small.
// A batch runs one round: the next chunk of each of its streams. A stream with more chunks
// ready goes back to the end of the queue (its chunks still due by the time it first
// queued), so a stream fed much audio at once takes turns with the others instead of holding
// its batch-mates for several rounds; a feed returns once all its stream's chunks ran. A lone
// member stream runs at once, round after round, as it would alone. Batches on different
// backends run at the same time.
//
// An error inside a batch is every one of its feeds' error (they shared the step); errors of
// a stream's own input are found before it queues (LiveStream::take_audio) and stay its
// own. Thread-safe; one feed at a time per stream (the caller's lock).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "model/batch_queue.h"
#include "model/model.h"
#include "model/stream/live_stream.h"

namespace pk {

class StreamBatcher {
public:
    // Throws InvalidArgument for max_batch < 1 or max_wait_ms < 0.
    StreamBatcher(const Model& model, int max_batch, int max_wait_ms);

    // Membership: the streams that may queue (counted for the "every member waits" rule).
    // join throws InvalidArgument for a stream of another model.
    void join(const LiveStream& s);
    void leave();
    int members() const;
    // The streams queued now, waiting for a batch (or for a backend for theirs).
    int waiting() const;

    // Runs the chunks `s` has ready (none: returns at once) in some batch; returns once they
    // ran. `s` is one of the members, used by no other thread until this returns. Rethrows the
    // batch's error.
    void run(LiveStream& s);

    // What the batcher did: how many batches (rounds) ran of each size, and how long their
    // streams waited in the queue each time.
    using Stats = BatchStats;
    Stats stats() const;

    const Model& model() const { return model_; }
    int max_batch() const { return limits_.max_batch; }
    int max_wait_ms() const { return static_cast<int>(limits_.max_wait.count()); }

private:
    struct Waiter;
    using Clock = std::chrono::steady_clock;
    // Whether the queue's oldest waiter should run a batch now (under mu_).
    bool batch_due(Clock::time_point now) const;
    void run_batch(std::unique_lock<std::mutex>& lock);

    const Model& model_;
    const BatchLimits limits_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Waiter*> queue_;  // waiting, oldest first
    int members_ = 0;
    Stats stats_;
};

}  // namespace pk
