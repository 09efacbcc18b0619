// Runs a test body with the process-wide backend (what a stream or request leases without a
// pool) at a given thread count, restoring the count afterwards.
#pragma once

#include <mutex>

#include "runtime/backend.h"

namespace test_threads {

template <class Fn>
void with_default_threads(int threads, Fn fn) {
    pk::Backend& b = pk::default_backend();
    int before;
    {
        std::lock_guard<std::mutex> lock(b.mutex());
        before = b.n_threads();
        b.set_threads(threads);
    }
    fn();
    std::lock_guard<std::mutex> lock(b.mutex());
    b.set_threads(before);
}

}  // namespace test_threads
