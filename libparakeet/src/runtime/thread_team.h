// ThreadTeam: a persistent team of compute threads that runs one job at a time.
//
// The caller of run() is thread 0 and works too; the n-1 workers watch one atomic generation
// counter. Publishing a job is a release-increment of that counter; each worker runs its
// slice and counts itself done; the caller runs its own slice and then waits for the count.
// There is no lock, queue or OS wake-up on the hot path, so dispatch costs well under a
// microsecond (decoder steps issue many small jobs). Idle workers spin briefly, then yield,
// then sleep on a condition variable after about a millisecond, so an idle team uses no CPU.
//
// Determinism contract for everything built on this: work is split by output only, and every
// output element is computed by one thread with the same code in the same order, so results
// are bitwise identical for any team size.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace pk {

class ThreadTeam {
public:
    // n_threads >= 1 (smaller values are treated as 1): the caller plus n_threads-1 workers.
    explicit ThreadTeam(int n_threads);
    // Stops and joins every worker. Must not be called while run() is in progress.
    ~ThreadTeam();
    ThreadTeam(const ThreadTeam&) = delete;
    ThreadTeam& operator=(const ThreadTeam&) = delete;

    int size() const { return n_threads_; }

    // Runs job(ith, nth) on every thread of the team (the caller is ith = 0, nth = size())
    // and returns when all have finished. One job at a time: callers serialise (the owning
    // Backend's mutex does that). An exception thrown by any slice is rethrown here after
    // every thread has finished its slice.
    template <class Job>
    void run(Job&& job) {
        using J = std::remove_reference_t<Job>;
        dispatch([](void* ctx, int ith, int nth) { (*static_cast<J*>(ctx))(ith, nth); },
                 const_cast<void*>(static_cast<const void*>(&job)));
    }

    // Number of jobs dispatched to the workers so far (for tests and diagnostics).
    uint64_t jobs_dispatched() const { return generation_.load(std::memory_order_relaxed); }

private:
    using JobFn = void (*)(void* ctx, int ith, int nth);

    void dispatch(JobFn fn, void* ctx);
    void worker_main(int ith);
    // Returns the new generation, or 0 when the team is stopping.
    uint64_t wait_for_job(uint64_t seen);
    void run_slice(int ith);

    const int n_threads_;
    std::vector<std::thread> workers_;

    // The job being run; written by the caller before the generation is published.
    JobFn job_fn_ = nullptr;
    void* job_ctx_ = nullptr;

    alignas(64) std::atomic<uint64_t> generation_{0};
    alignas(64) std::atomic<int> done_{0};
    alignas(64) std::atomic<bool> stop_{false};

    // Sleep path, used only by idle workers.
    std::mutex sleep_mu_;
    std::condition_variable sleep_cv_;
    std::atomic<int> sleepers_{0};

    // First exception thrown by a worker slice during the current job.
    std::mutex error_mu_;
    std::exception_ptr worker_error_;
};

// Splits [0, n) into contiguous chunks of at least `grain` items (one per thread, at most
// team.size() of them) and calls f(begin, end) for each. Runs inline on the caller, with no
// dispatch, when there is only one chunk. Chunk boundaries depend on the team size, so f
// must compute each item independently of which chunk it lands in.
template <class F>
void parallel_for(ThreadTeam& team, int64_t n, int64_t grain, F&& f) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int64_t chunks = n / grain;
    if (chunks > team.size()) chunks = team.size();
    if (chunks <= 1) {
        f(int64_t{0}, n);
        return;
    }
    team.run([&](int ith, int) {
        if (ith >= chunks) return;
        const int64_t begin = n * ith / chunks;
        const int64_t end = n * (ith + 1) / chunks;
        f(begin, end);
    });
}

}  // namespace pk
