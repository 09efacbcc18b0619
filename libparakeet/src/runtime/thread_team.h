// ThreadTeam: a persistent team of compute threads that runs one job at a time.
//
// A job is a number of chunks. The caller of run_chunks() is thread 0 and works too; the n-1
// workers watch one atomic generation counter. Publishing a job splits the chunks into one
// contiguous home range per thread, stores each range in its claim word, and
// release-increments the generation. Every team thread, the caller first, then claims the
// chunks of its own range with one atomic add each, and after that the chunks left in the
// others' ranges. So a prompt team runs the same static split every job, each thread on data
// its own cache holds (one shared counter instead measured 1.3x slower on CAM++), and the
// caller waits only for the chunks to finish, never for a worker to arrive: a worker that the
// OS has descheduled (cores shared with other processes) finds its range taken when it wakes
// and goes back to waiting, instead of stalling every pass until it gets a core again. There
// is no lock, queue or OS wake-up on the hot path, so dispatch costs well under a microsecond
// (decoder steps issue many small jobs). Idle workers spin briefly, then yield,
// then sleep on a condition variable after about a millisecond, so an idle team uses no CPU.
//
// Determinism contract for everything built on this: work is split by output only, and every
// output element is computed by one thread with the same code in the same order, so results
// are bitwise identical for any team size.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
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

    // Runs job(chunk, thread) once for every chunk in [0, n_chunks) and returns when all have
    // finished. Thread t first runs the chunks of its home range [n*t/size(), n*(t+1)/size()),
    // then helps with what is left of the others' (the caller is t = 0); `thread` in
    // [0, size()) is the executing thread, the index for per-thread scratch (one
    // thread runs its chunks one after another). With one chunk, or a team of one, everything
    // runs inline on the caller. One job at a time: callers serialise (the owning Backend's
    // mutex does that). The first exception thrown by a chunk is rethrown here once no chunk
    // is running any more; chunks not yet started by then may or may not have run.
    template <class Job>
    void run_chunks(int64_t n_chunks, Job&& job) {
        if (n_chunks <= 0) return;
        if (n_chunks == 1 || n_threads_ == 1) {
            for (int64_t c = 0; c < n_chunks; ++c) job(c, 0);
            return;
        }
        using J = std::remove_reference_t<Job>;
        dispatch([](void* ctx, int64_t chunk, int thread) { (*static_cast<J*>(ctx))(chunk, thread); },
                 const_cast<void*>(static_cast<const void*>(&job)), n_chunks);
    }

    // Runs job(ith, nth) once for every ith in [0, nth), nth = size(): a static split into one
    // slice per thread, run by run_chunks, so slice ith runs on thread ith unless that thread
    // is late, and then on one that is free (which may run two). Slices must not wait for
    // each other.
    template <class Job>
    void run(Job&& job) {
        const int nth = n_threads_;
        run_chunks(nth, [&](int64_t ith, int) { job(static_cast<int>(ith), nth); });
    }

    // Number of jobs dispatched to the workers so far (for tests and diagnostics).
    uint64_t jobs_dispatched() const { return generation_.load(std::memory_order_relaxed); }

private:
    using JobFn = void (*)(void* ctx, int64_t chunk, int thread);

    void dispatch(JobFn fn, void* ctx, int64_t n_chunks);
    void worker_main(int ith);
    // Returns the new generation, or 0 when the team is stopping.
    uint64_t wait_for_job(uint64_t seen);
    // Claims and runs chunks of the current job on thread `thread`, its own range first, until
    // none is left; returns how many it ran. A chunk's exception is kept for the caller.
    int64_t claim_chunks(int thread);

    const int n_threads_;
    std::vector<std::thread> workers_;

    // The job being run; written by the caller before the claim words are published, read only
    // by a thread that has claimed one of its chunks.
    JobFn job_fn_ = nullptr;
    void* job_ctx_ = nullptr;

    alignas(64) std::atomic<uint64_t> generation_{0};
    // A thread's home range as a claim word: the range's end in the high 32 bits, its next
    // unclaimed chunk in the low 32. One word, so a fetch_add that returns next < end has
    // claimed a chunk of the job that is running now, however late the thread arrives; a
    // claim past the end is a no-op (it cannot carry into the end: each thread adds at most
    // once past it per pass over the ranges).
    struct alignas(64) ClaimWord {
        std::atomic<uint64_t> word{0};
    };
    std::unique_ptr<ClaimWord[]> ranges_;
    // Chunks the workers have finished in the current job.
    alignas(64) std::atomic<int64_t> chunks_done_{0};
    alignas(64) std::atomic<bool> stop_{false};

    // Sleep path, used only by idle workers.
    std::mutex sleep_mu_;
    std::condition_variable sleep_cv_;
    std::atomic<int> sleepers_{0};

    // First exception thrown by a chunk during the current job.
    std::mutex error_mu_;
    std::exception_ptr worker_error_;
};

// parallel_for cuts a loop into this many chunks per team thread (fewer when `grain` says
// so): a thread that gets its core back late then leaves only half its share for the others
// to wait on. 1, 2, 4 and 8 measured alike, quiet or with a busy neighbour
// (docs/performance.md, "Dynamic chunks"); 2 is the fewest that still splits a share.
constexpr int64_t kParallelForChunksPerThread = 2;

// Splits [0, n) into contiguous chunks of at least `grain` items (at most
// kParallelForChunksPerThread per team thread), claimed dynamically by the team (run_chunks),
// and calls f(begin, end) for each. Runs f(0, n) inline on the caller, with no dispatch, when
// there is only one chunk or one thread. Chunk boundaries depend on the team size and chunks
// run on any thread, so f must compute each item independently of which chunk it lands in,
// and must not index per-thread scratch by chunk.
template <class F>
void parallel_for(ThreadTeam& team, int64_t n, int64_t grain, F&& f) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    const int64_t chunks = std::min<int64_t>(n / grain, team.size() * kParallelForChunksPerThread);
    if (chunks <= 1 || team.size() == 1) {
        f(int64_t{0}, n);
        return;
    }
    team.run_chunks(chunks, [&](int64_t c, int) { f(n * c / chunks, n * (c + 1) / chunks); });
}

}  // namespace pk
