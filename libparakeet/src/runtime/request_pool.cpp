#include "runtime/request_pool.h"

#include <algorithm>

#include "runtime/thread_budget.h"

namespace pk {

std::shared_ptr<BackendPool> RequestPool::snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    return pool_;
}

int RequestPool::set_concurrency(int backends, int threads_each) {
    if (backends > kMaxBackends) backends = kMaxBackends;
    std::shared_ptr<BackendPool> old;
    std::lock_guard<std::mutex> lock(mu_);
    if (backends <= 1 && threads_ == 0) {
        old = std::move(pool_);  // destroyed after the lock is released (it may wait for leases)
        return 1;
    }
    backends = std::max(1, backends);
    if (threads_each <= 0) threads_each = std::max(1, thread_budget() / backends);
    if (pool_ && pool_->size() == backends && pool_->threads_each() == threads_each) return backends;
    old = std::move(pool_);
    pool_ = std::make_shared<BackendPool>(backends, threads_each);
    return backends;
}

int RequestPool::thread_budget() const { return threads_ > 0 ? threads_ : default_thread_count(); }

int RequestPool::backends() const {
    const auto pool = snapshot();
    return pool ? pool->size() : 1;
}

size_t RequestPool::working_set_bytes() const {
    const auto pool = snapshot();
    return pool ? pool->working_set_bytes() : 0;
}

}  // namespace pk
