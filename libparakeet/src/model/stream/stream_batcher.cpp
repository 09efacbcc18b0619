#include "model/stream/stream_batcher.h"

#include <algorithm>
#include <exception>
#include <vector>

#include "common/errors.h"
#include "model/stream/stream_batch.h"

namespace pk {

struct StreamBatcher::Waiter {
    LiveStream* stream;
    Clock::time_point since;   // when its chunks began to wait (the max_wait rule)
    Clock::time_point queued;  // when it last entered the queue (the waiting time reported)
    bool taken = false;  // in a batch that runs now
    bool done = false;
    std::exception_ptr error;
};

StreamBatcher::StreamBatcher(const Model& model, int max_batch, int max_wait_ms)
    : model_(model), limits_("stream group", max_batch, max_wait_ms), stats_(max_batch) {}

StreamBatcher::Stats StreamBatcher::stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
}

void StreamBatcher::join(const LiveStream& s) {
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
    return n >= limits_.max_batch || n >= members_ || now >= queue_.front()->since + limits_.max_wait;
}

void StreamBatcher::run(LiveStream& s) {
    if (!s.chunk_ready()) return;
    const Clock::time_point now = Clock::now();
    Waiter me{&s, now, now, false, false, nullptr};
    std::unique_lock<std::mutex> lock(mu_);
    queue_.push_back(&me);
    cv_.notify_all();  // the oldest waiter may now have a full batch
    wait_for_batch(
        lock, cv_, queue_, me, me.since + limits_.max_wait, [this](Clock::time_point t) { return batch_due(t); },
        [this](std::unique_lock<std::mutex>& l) { run_batch(l); });
    if (me.error) std::rethrow_exception(me.error);
}

void StreamBatcher::run_batch(std::unique_lock<std::mutex>& lock) {
    // A backend first, then the batch: the chunks that queue while every backend is busy join
    // this batch (the leader stays at the front meanwhile, so no other batch forms) instead of
    // waiting in small batches of their own for the backends to free.
    lock.unlock();
    const BackendLease lease = model_.lease_backend();
    lock.lock();
    const std::vector<Waiter*> batch = take_batch(queue_, limits_.max_batch, stats_);
    cv_.notify_all();  // the next oldest leads the next batch
    lock.unlock();
    std::exception_ptr error;
    try {
        std::vector<LiveStream*> streams;
        for (Waiter* w : batch) streams.push_back(w->stream);
        run_stream_batch(streams, lease.backend(), 1);
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
