#include "model/stream/stream_batcher.h"

#include <algorithm>
#include <exception>
#include <vector>

#include "common/errors.h"
#include "model/stream/cache_aware_batch.h"

namespace pk {

struct StreamBatcher::Waiter {
    CacheAwareStream* stream;
    Clock::time_point since;   // when its chunks began to wait (the max_wait rule)
    Clock::time_point queued;  // when it last entered the queue (the waiting time reported)
    bool taken = false;  // in a batch that runs now
    bool done = false;
    std::exception_ptr error;
};

StreamBatcher::StreamBatcher(const Model& model, int max_batch, int max_wait_ms)
    : model_(model), max_batch_(max_batch), max_wait_(max_wait_ms) {
    if (max_batch < 1) throw InvalidArgument("stream group: max_batch must be at least 1");
    if (max_wait_ms < 0) throw InvalidArgument("stream group: max_wait_ms must not be negative");
    stats_.batch_sizes.assign(static_cast<size_t>(max_batch), 0);
}

StreamBatcher::Stats StreamBatcher::stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
}

void StreamBatcher::join(const CacheAwareStream& s) {
    if (&s.model() != &model_) throw InvalidArgument("stream group: the stream is of another context's model");
    std::lock_guard<std::mutex> lock(mu_);
    ++members_;
}

void StreamBatcher::leave() {
    std::lock_guard<std::mutex> lock(mu_);
    --members_;
    cv_.notify_all();  // the waiters may now be every member
}

int StreamBatcher::members() const {
    std::lock_guard<std::mutex> lock(mu_);
    return members_;
}

int StreamBatcher::waiting() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(queue_.size());
}

bool StreamBatcher::batch_due(Clock::time_point now) const {
    const auto n = static_cast<int64_t>(queue_.size());
    return n >= max_batch_ || n >= members_ || now >= queue_.front()->since + max_wait_;
}

void StreamBatcher::run(CacheAwareStream& s) {
    if (!s.chunk_ready()) return;
    const Clock::time_point now = Clock::now();
    Waiter me{&s, now, now, false, false, nullptr};
    std::unique_lock<std::mutex> lock(mu_);
    queue_.push_back(&me);
    cv_.notify_all();  // the oldest waiter may now have a full batch
    try {
        while (!me.done) {
            if (!me.taken && queue_.front() == &me) {
                if (batch_due(Clock::now())) {
                    run_batch(lock);
                    continue;
                }
                cv_.wait_until(lock, me.since + max_wait_);
            } else {
                cv_.wait(lock);
            }
        }
    } catch (...) {
        // Only run_batch's bookkeeping can throw (out of memory), before it took anyone: `me`
        // must not stay queued once this frame is gone.
        if (!me.taken) queue_.erase(std::find(queue_.begin(), queue_.end(), &me));
        throw;
    }
    if (me.error) std::rethrow_exception(me.error);
}

void StreamBatcher::run_batch(std::unique_lock<std::mutex>& lock) {
    // A backend first, then the batch: the chunks that queue while every backend is busy join
    // this batch (the leader stays at the front meanwhile, so no other batch forms) instead of
    // waiting in small batches of their own for the backends to free.
    lock.unlock();
    const BackendLease lease = model_.lease_backend();
    lock.lock();
    const size_t n = std::min(queue_.size(), static_cast<size_t>(max_batch_));
    std::vector<Waiter*> batch(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    const Clock::time_point now = Clock::now();
    for (Waiter* w : batch) {
        w->taken = true;
        const double waited = std::chrono::duration<double, std::milli>(now - w->queued).count();
        stats_.waited_ms_total += waited;
        stats_.waited_ms_max = std::max(stats_.waited_ms_max, waited);
    }
    ++stats_.batch_sizes[n - 1];
    cv_.notify_all();  // the next oldest leads the next batch
    lock.unlock();
    std::exception_ptr error;
    try {
        std::vector<CacheAwareStream*> streams;
        for (Waiter* w : batch) streams.push_back(w->stream);
        CacheAwareBatch(streams).run(lease.backend(), 1);
    } catch (...) {
        error = std::current_exception();
    }
    lock.lock();
    for (Waiter* w : batch) {
        w->taken = false;
        w->error = error;
        if (!error && w->stream->chunk_ready()) {  // its next chunk takes its turn
            w->queued = Clock::now();
            try {
                queue_.push_back(w);
                continue;
            } catch (...) {  // out of memory: this feed ends with that error
                w->error = std::current_exception();
            }
        }
        w->done = true;
    }
    cv_.notify_all();
}

}  // namespace pk
