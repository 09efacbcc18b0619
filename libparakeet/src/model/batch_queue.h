// What the batchers of one model share (StreamBatcher for live streams, RequestBatcher for
// offline requests): callers queue and wait, and the oldest waiting caller runs the batch when
// it is due; no thread of their own.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace pk {

using BatchClock = std::chrono::steady_clock;

// A batcher's limits: at most max_batch members per batch, and the longest the oldest waits
// for others. `who` names the batcher in the errors: InvalidArgument for max_batch < 1 or
// max_wait_ms < 0.
struct BatchLimits {
    BatchLimits(const char* who, int max_batch, int max_wait_ms);
    int max_batch;
    std::chrono::milliseconds max_wait;
};

// What a batcher did: how many batches ran of each size (batch_sizes[i]: of i + 1 members),
// and how long their members waited in the queue.
struct BatchStats {
    std::vector<int64_t> batch_sizes;
    double waited_ms_max = 0.0, waited_ms_total = 0.0;

    BatchStats() = default;
    // No batches yet, of up to `max_batch` members.
    explicit BatchStats(int max_batch) : batch_sizes(static_cast<size_t>(max_batch), 0) {}
    // A member waited `ms` for its batch.
    void waited(double ms) {
        waited_ms_total += ms;
        waited_ms_max = std::max(waited_ms_max, ms);
    }
};

// Takes the oldest waiters, at most `max_batch`, off `queue` for a batch: marks them taken and
// records the batch and how long each waited since w->queued.
template <class Waiter>
std::vector<Waiter*> take_batch(std::deque<Waiter*>& queue, int max_batch, BatchStats& stats) {
    const auto n = static_cast<std::ptrdiff_t>(std::min(queue.size(), static_cast<size_t>(max_batch)));
    std::vector<Waiter*> batch(queue.begin(), queue.begin() + n);
    queue.erase(queue.begin(), queue.begin() + n);
    const auto now = BatchClock::now();
    for (Waiter* w : batch) {
        w->taken = true;
        stats.waited(std::chrono::duration<double, std::milli>(now - w->queued).count());
    }
    ++stats.batch_sizes[batch.size() - 1];
    return batch;
}

// The wait of one caller, `me`, queued in `queue` (lock held; `cv` is notified whenever the
// queue or what `due` reads changes). Until me.done: when `me` is the oldest waiter and not in
// a running batch (me.taken), it runs run_batch(lock) if due(now), else sleeps until
// `deadline` (its max wait; once past it, until a notification) or a notification; the others
// sleep until a notification. Waiter
// has `bool taken, done`. If run_batch throws (its bookkeeping, out of memory) before it took
// `me`, `me` leaves the queue before the error goes on.
template <class Waiter, class Due, class RunBatch>
void wait_for_batch(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, std::deque<Waiter*>& queue,
                    Waiter& me, BatchClock::time_point deadline, Due&& due, RunBatch&& run_batch) {
    try {
        while (!me.done) {
            if (!me.taken && queue.front() == &me) {
                const BatchClock::time_point now = BatchClock::now();
                if (due(now)) {
                    run_batch(lock);
                    continue;
                }
                if (now < deadline) cv.wait_until(lock, deadline);
                else cv.wait(lock);  // past its max wait and still not due: what it waits for notifies
            } else {
                cv.wait(lock);
            }
        }
    } catch (...) {
        if (!me.taken) queue.erase(std::find(queue.begin(), queue.end(), &me));
        throw;
    }
}

}  // namespace pk
