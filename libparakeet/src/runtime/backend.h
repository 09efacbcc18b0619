// Backend: everything one request needs to run — a thread team, an arena for intermediates,
// and the mutex that gives one request at a time exclusive use of both.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk {

class Backend {
public:
    explicit Backend(int n_threads);
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;

    // Lock this before using team() or arena(); hold it for the whole request.
    std::mutex& mutex() { return mu_; }

    ThreadTeam& team() { return *team_; }
    Arena& arena() { return arena_; }
    int n_threads() const { return team_->size(); }

    // Replace the thread team by one of n_threads (the caller holds mutex()).
    void set_threads(int n_threads);

    // Bytes the arena holds (reading it needs mutex() too).
    size_t working_set_bytes() const { return arena_.reserved_bytes(); }

private:
    std::mutex mu_;
    std::unique_ptr<ThreadTeam> team_;
    Arena arena_;
};

// The process-wide backend, created on first use (thread-safe) with default_thread_count()
// threads. It lives until the process exits.
Backend& default_backend();

// Gives back the default backend's arena memory, if the backend exists (waits for a request
// running on it). Its threads stay: the backend keeps serving later requests.
void release_default_backend_memory();

}  // namespace pk
