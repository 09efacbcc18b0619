#include "runtime/backend_pool.h"

#include <algorithm>
#include <utility>

namespace pk {
namespace {

// The backends the current thread holds, with the pool (or null for the default backend)
// each came from: lets a nested request reuse its thread's backend instead of deadlocking.
struct HeldBackend {
    const void* owner;
    Backend* backend;
};
thread_local std::vector<HeldBackend> t_held;

Backend* held_by_this_thread(const void* owner) {
    for (const auto& h : t_held)
        if (h.owner == owner) return h.backend;
    return nullptr;
}

void forget_held(const void* owner) {
    for (auto it = t_held.begin(); it != t_held.end(); ++it) {
        if (it->owner == owner) {
            t_held.erase(it);
            return;
        }
    }
}

}  // namespace

BackendPool::BackendPool(int backends, int threads_each) : threads_each_(std::max(1, threads_each)) {
    backends = std::max(1, backends);
    backends_.reserve(static_cast<size_t>(backends));
    for (int i = 0; i < backends; ++i) {
        backends_.push_back(std::make_unique<Backend>(threads_each_));
        free_.push_back(backends - 1 - i);  // pop_back hands out backend 0 first
    }
    arena_bytes_.assign(static_cast<size_t>(backends), 0);
}

BackendPool::~BackendPool() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return in_use_ == 0; });
}

BackendPool::Lease BackendPool::acquire() {
    if (Backend* held = held_by_this_thread(this)) return Lease(nullptr, held, -1);
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t ticket = next_ticket_++;
    cv_.wait(lock, [&] { return ticket == now_serving_ && !free_.empty(); });
    ++now_serving_;
    const int index = free_.back();
    free_.pop_back();
    ++in_use_;
    peak_in_use_ = std::max(peak_in_use_, in_use_);
    ++total_leases_;
    lock.unlock();
    // The next ticket may be servable right away (another backend is free).
    cv_.notify_all();
    Backend* b = backends_[static_cast<size_t>(index)].get();
    t_held.push_back({this, b});
    return Lease(this, b, index);
}

void BackendPool::give_back(int index) {
    forget_held(this);
    {
        std::lock_guard<std::mutex> lock(mu_);
        // The lease holder is done with the arena, so reading its size here is safe.
        arena_bytes_[static_cast<size_t>(index)] = backends_[static_cast<size_t>(index)]->arena().reserved_bytes();
        free_.push_back(index);
        --in_use_;
    }
    cv_.notify_all();
}

BackendPool::Lease& BackendPool::Lease::operator=(Lease&& other) noexcept {
    if (this != &other) {
        release();
        pool_ = std::exchange(other.pool_, nullptr);
        backend_ = std::exchange(other.backend_, nullptr);
        index_ = std::exchange(other.index_, -1);
    }
    return *this;
}

void BackendPool::Lease::release() {
    if (pool_ != nullptr) pool_->give_back(index_);
    pool_ = nullptr;
    backend_ = nullptr;
    index_ = -1;
}

int BackendPool::in_use() const {
    std::lock_guard<std::mutex> lock(mu_);
    return in_use_;
}

int BackendPool::peak_in_use() const {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_in_use_;
}

int BackendPool::waiting() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(next_ticket_ - now_serving_);
}

uint64_t BackendPool::total_leases() const {
    std::lock_guard<std::mutex> lock(mu_);
    return total_leases_;
}

size_t BackendPool::working_set_bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t total = 0;
    for (size_t b : arena_bytes_) total += b;
    return total;
}

BackendLease::BackendLease(const std::shared_ptr<BackendPool>& pool) : pool_(pool) {
    if (pool_) {
        lease_ = pool_->acquire();
        backend_ = &lease_.backend();
        return;
    }
    Backend& def = default_backend();
    if (Backend* held = held_by_this_thread(&def)) {
        backend_ = held;
        return;
    }
    default_lock_ = std::unique_lock<std::mutex>(def.mutex());
    backend_ = &def;
    t_held.push_back({&def, &def});
    registered_ = true;
}

BackendLease::~BackendLease() {
    if (registered_) forget_held(backend_);
}

}  // namespace pk
