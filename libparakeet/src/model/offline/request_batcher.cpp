#include "model/offline/request_batcher.h"

#include <algorithm>
#include <exception>

#include "common/errors.h"
#include "model/request_progress.h"

namespace pk {

struct RequestBatcher::Waiter {
    OfflineRequest* request;
    BatchClock::time_point queued;  // when it queued (its max_wait runs from then)
    bool taken = false;       // in a batch that runs now
    bool done = false;
};

RequestBatcher::RequestBatcher(const Model& model, int max_batch, int max_wait_ms)
    : model_(model), batch_(model), limits_("request batching", max_batch, max_wait_ms), stats_(max_batch) {}

RequestBatcher::Stats RequestBatcher::stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
}

bool RequestBatcher::batch_due(BatchClock::time_point now) const {
    if (static_cast<int64_t>(queue_.size()) >= limits_.max_batch) return true;
    if (running_ >= model_.backends()) return false;  // gather until a backend is free
    return in_flight_ == 1 || now >= queue_.front()->queued + limits_.max_wait;
}

bool RequestBatcher::runs_batched(const RequestOptions& options, int64_t n, int sample_rate) {
    const bool is_long = sample_rate > 0 && static_cast<double>(n) / sample_rate > kMaxBatchedSeconds;
    return OfflineBatch::batchable(options) && !is_long;
}

Transcript RequestBatcher::transcribe(const float* samples, int64_t n, int sample_rate,
                                      const RequestOptions& options) {
    if (!runs_batched(options, n, sample_rate)) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            ++stats_.unbatched;
        }
        return model_.transcribe(samples, n, sample_rate, options);
    }
    OfflineRequest request{samples, n, sample_rate, &options, {}, nullptr};
    batch_.check(request);  // its own errors before it queues
    RequestProgress progress(options.progress);
    progress.report(0.0);
    Waiter me{&request, BatchClock::now()};
    std::unique_lock<std::mutex> lock(mu_);
    queue_.push_back(&me);
    ++in_flight_;
    cv_.notify_all();  // the oldest waiter may now have a full batch
    const auto due = [this](BatchClock::time_point t) { return batch_due(t); };
    try {
        wait_for_batch(lock, cv_, queue_, me, me.queued + limits_.max_wait, due,
                       [this](std::unique_lock<std::mutex>& l) { run_batch(l); });
    } catch (...) {
        --in_flight_;
        throw;
    }
    --in_flight_;
    cv_.notify_all();  // the oldest waiter may now be alone
    lock.unlock();
    if (request.error) std::rethrow_exception(request.error);
    progress.report(1.0);
    return std::move(request.transcript);
}

void RequestBatcher::run_batch(std::unique_lock<std::mutex>& lock) {
    const std::vector<Waiter*> batch = take_batch(queue_, limits_.max_batch, stats_);
    std::vector<OfflineRequest*> requests;
    for (Waiter* w : batch) requests.push_back(w->request);
    ++running_;
    cv_.notify_all();  // the next oldest leads the next batch
    lock.unlock();
    batch_.run_leased(requests);
    lock.lock();
    --running_;
    for (Waiter* w : batch) w->done = true;
    cv_.notify_all();
}

}  // namespace pk
