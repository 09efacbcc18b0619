// Timing helpers shared by the native benchmarks.
#pragma once

#include <time.h>

#include <algorithm>
#include <vector>

namespace bench {

// CPU time of this process (all threads), in seconds: steadier than wall time on a shared
// machine, where other work steals the cores.
inline double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace bench
