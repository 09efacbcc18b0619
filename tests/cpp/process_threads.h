// Number of threads of this process right now (/proc/self/task), for tests that check that
// thread teams and pools leave no threads behind.
#pragma once

#include <dirent.h>

#include <chrono>
#include <thread>

inline int process_thread_count() {
    int n = 0;
    if (DIR* d = opendir("/proc/self/task")) {
        while (dirent* e = readdir(d))
            if (e->d_name[0] != '.') ++n;
        closedir(d);
    }
    return n;
}

// The thread count once it has reached `expected`, or after two seconds whatever it is then.
// pthread_join returns when the kernel clears the exiting thread's tid, which is a moment before
// the task leaves /proc/self/task, so a count taken right after a join can still include it.
inline int process_thread_count_settling_to(int expected) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    int n = process_thread_count();
    while (n != expected && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        n = process_thread_count();
    }
    return n;
}
