// ThreadTeam dispatch cost and idle CPU use.
//
// Prints JSON: the median / p90 time to run an empty job on a team (caller + workers), and
// the CPU time the whole process burns while the team sits idle, measured over a window that
// starts after 10 ms of idleness.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "runtime/thread_team.h"

namespace {

double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(p * (v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
    const int n_threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 200000;
    pk::ThreadTeam team(n_threads);

    // Back-to-back empty jobs, as a decoder issues them. Timed in batches of 100 so the clock
    // read does not dominate; the per-job figure is the batch time / 100.
    using Clock = std::chrono::steady_clock;
    for (int i = 0; i < 1000; ++i) team.run([](int, int) {});
    std::vector<double> per_job_us;
    for (int b = 0; b < reps / 100; ++b) {
        const auto t0 = Clock::now();
        for (int i = 0; i < 100; ++i) team.run([](int, int) {});
        per_job_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 100);
    }

    // A job after a pause (workers asleep): the wake-up cost a server sees on a new request.
    std::vector<double> wake_us;
    for (int i = 0; i < 20; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const auto t0 = Clock::now();
        team.run([](int, int) {});
        wake_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }

    // Idle CPU: after 10 ms of idleness, CPU time used during the next 200 ms.
    team.run([](int, int) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const double cpu0 = process_cpu_seconds();
    const auto w0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double wall = std::chrono::duration<double>(Clock::now() - w0).count();
    const double idle_cpu_pct = 100.0 * (process_cpu_seconds() - cpu0) / wall;

    std::printf(
        "{\"threads\": %d, \"dispatch_median_us\": %.3f, \"dispatch_p90_us\": %.3f, "
        "\"wake_after_sleep_median_us\": %.1f, \"idle_cpu_percent_after_10ms\": %.3f}\n",
        n_threads, percentile(per_job_us, 0.5), percentile(per_job_us, 0.9), percentile(wake_us, 0.5),
        idle_cpu_pct);
    return 0;
}
