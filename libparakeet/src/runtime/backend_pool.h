// BackendPool: K backends that requests borrow one at a time, so K requests run at once
// against one loaded model (each backend has its own thread team and arena; the weights are
// shared). A request holds its Lease for its whole duration and runs on the caller's thread.
//
// Fairness: callers are served strictly in arrival order (a ticket queue), so no caller
// starves however many others keep arriving. Reentrancy: a thread that already holds a lease
// on a pool gets an inert lease on the same backend instead of waiting for itself.
// Lifetime: the pool's destructor waits until every lease has been returned; owners keep the
// pool in a shared_ptr that each request snapshots, so a replaced pool dies after its last
// request and joins its threads then.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/backend.h"

namespace pk {

class BackendPool {
public:
    // backends >= 1 backends of threads_each >= 1 threads each.
    BackendPool(int backends, int threads_each);
    ~BackendPool();
    BackendPool(const BackendPool&) = delete;
    BackendPool& operator=(const BackendPool&) = delete;

    class Lease {
    public:
        Lease() = default;
        Lease(Lease&& other) noexcept { *this = std::move(other); }
        Lease& operator=(Lease&& other) noexcept;
        ~Lease() { release(); }

        Backend& backend() const { return *backend_; }
        explicit operator bool() const { return backend_ != nullptr; }
        // True for the inner lease of a thread that already held one on this pool.
        bool reentrant() const { return pool_ == nullptr && backend_ != nullptr; }

    private:
        friend class BackendPool;
        Lease(BackendPool* pool, Backend* backend, int index) : pool_(pool), backend_(backend), index_(index) {}
        void release();

        BackendPool* pool_ = nullptr;  // null for an inert (reentrant) lease
        Backend* backend_ = nullptr;
        int index_ = -1;
    };

    // Waits for a free backend (first come, first served) and lends it to the caller.
    Lease acquire();

    int size() const { return static_cast<int>(backends_.size()); }
    int threads_each() const { return threads_each_; }
    int in_use() const;
    int peak_in_use() const;
    int waiting() const;
    uint64_t total_leases() const;
    // Sum of the backends' arenas, as of their last release.
    size_t working_set_bytes() const;

private:
    void give_back(int index);

    const int threads_each_;
    std::vector<std::unique_ptr<Backend>> backends_;

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::vector<int> free_;            // indices of idle backends
    std::vector<size_t> arena_bytes_;  // per backend, updated on release
    uint64_t next_ticket_ = 0;         // handed to the next caller
    uint64_t now_serving_ = 0;         // the ticket whose turn it is
    int in_use_ = 0;
    int peak_in_use_ = 0;
    uint64_t total_leases_ = 0;
};

// Which backend runs the current thread's request: a lease on a pool, or the process-wide
// default backend (locked for the request's duration). Reentrant like the pool's leases.
class BackendLease {
public:
    // pool null: the default backend.
    explicit BackendLease(const std::shared_ptr<BackendPool>& pool);
    ~BackendLease();
    BackendLease(const BackendLease&) = delete;
    BackendLease& operator=(const BackendLease&) = delete;

    Backend& backend() const { return *backend_; }

private:
    std::shared_ptr<BackendPool> pool_;  // keeps the pool alive while the request runs
    BackendPool::Lease lease_;
    std::unique_lock<std::mutex> default_lock_;
    Backend* backend_ = nullptr;
    bool registered_ = false;
};

}  // namespace pk
