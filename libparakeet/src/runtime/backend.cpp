#include "runtime/backend.h"

#include <atomic>

#include "runtime/thread_budget.h"

namespace pk {

Backend::Backend(int n_threads) : team_(std::make_unique<ThreadTeam>(n_threads)) {}

void Backend::set_threads(int n_threads) {
    if (n_threads < 1) n_threads = 1;
    if (n_threads == team_->size()) return;
    team_.reset();  // join the old workers before starting new ones
    team_ = std::make_unique<ThreadTeam>(n_threads);
}

namespace {
std::atomic<Backend*> g_default_backend{nullptr};  // set once default_backend() made it
}  // namespace

Backend& default_backend() {
    // A function-local static is initialised exactly once, even under concurrent first calls.
    // It is deliberately leaked: worker threads must not be joined during static destruction,
    // when other static objects a late request might touch are already gone.
    static Backend* backend = [] {
        auto* b = new Backend(default_thread_count());
        g_default_backend.store(b, std::memory_order_release);
        return b;
    }();
    return *backend;
}

void release_default_backend_memory() {
    Backend* b = g_default_backend.load(std::memory_order_acquire);
    if (b == nullptr) return;
    std::lock_guard<std::mutex> lock(b->mutex());
    b->arena().release_if_above(0);
}

}  // namespace pk
