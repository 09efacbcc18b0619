#include "runtime/backend.h"

#include "runtime/thread_budget.h"

namespace pk {

Backend::Backend(int n_threads) : team_(std::make_unique<ThreadTeam>(n_threads)) {}

void Backend::set_threads(int n_threads) {
    if (n_threads < 1) n_threads = 1;
    if (n_threads == team_->size()) return;
    team_.reset();  // join the old workers before starting new ones
    team_ = std::make_unique<ThreadTeam>(n_threads);
}

Backend& default_backend() {
    // A function-local static is initialised exactly once, even under concurrent first calls.
    // It is deliberately leaked: worker threads must not be joined during static destruction,
    // when other static objects a late request might touch are already gone.
    static Backend* backend = new Backend(default_thread_count());
    return *backend;
}

}  // namespace pk
