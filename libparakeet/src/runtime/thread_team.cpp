#include "runtime/thread_team.h"

#include <chrono>
#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PK_CPU_RELAX() _mm_pause()
#else
#define PK_CPU_RELAX() ((void)0)
#endif

namespace pk {
namespace {

using Clock = std::chrono::steady_clock;

// An idle worker spins this long, then yields until kSleepAfter, then sleeps. Spinning keeps
// back-to-back decoder jobs cheap; sleeping keeps an idle server at ~0 % CPU.
constexpr auto kSpinFor = std::chrono::microseconds(50);
constexpr auto kSleepAfter = std::chrono::milliseconds(1);
// How many relax iterations between clock reads while spinning.
constexpr int kSpinsPerClockRead = 64;

}  // namespace

ThreadTeam::ThreadTeam(int n_threads)
    : n_threads_(n_threads < 1 ? 1 : n_threads), ranges_(new ClaimWord[static_cast<size_t>(n_threads_)]) {
    workers_.reserve(static_cast<size_t>(n_threads_ - 1));
    for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadTeam::~ThreadTeam() {
    stop_.store(true, std::memory_order_seq_cst);
    generation_.fetch_add(1, std::memory_order_seq_cst);
    {
        std::lock_guard<std::mutex> lock(sleep_mu_);
    }
    sleep_cv_.notify_all();
    for (auto& t : workers_) t.join();
}

int64_t ThreadTeam::claim_chunks(int thread) {
    int64_t ran = 0;
    for (int k = 0; k < n_threads_; ++k) {
        std::atomic<uint64_t>& range = ranges_[(thread + k) % n_threads_].word;
        for (;;) {
            // acq_rel: acquire pairs with the caller's release store of the claim word (the
            // job's fn and ctx become visible); release keeps the claims in one release sequence.
            const uint64_t word = range.fetch_add(1, std::memory_order_acq_rel);
            const int64_t end = static_cast<int64_t>(word >> 32);
            const int64_t chunk = static_cast<int64_t>(word & 0xffffffffu);
            if (chunk >= end) break;
            try {
                job_fn_(job_ctx_, chunk, thread);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mu_);
                if (!worker_error_) worker_error_ = std::current_exception();
            }
            ++ran;
        }
    }
    return ran;
}

void ThreadTeam::dispatch(JobFn fn, void* ctx, int64_t n_chunks) {
    if (n_chunks > 0x7fffffff) throw std::length_error("ThreadTeam: more than 2^31 - 1 chunks in one job");
    job_fn_ = fn;
    job_ctx_ = ctx;
    worker_error_ = nullptr;
    chunks_done_.store(0, std::memory_order_relaxed);
    for (int t = 0; t < n_threads_; ++t) {
        const auto begin = static_cast<uint64_t>(n_chunks * t / n_threads_);
        const auto end = static_cast<uint64_t>(n_chunks * (t + 1) / n_threads_);
        ranges_[t].word.store(end << 32 | begin, std::memory_order_release);
    }
    // seq_cst pairs with the sleepers_ handshake in wait_for_job (no lost wake-ups).
    generation_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
        { std::lock_guard<std::mutex> lock(sleep_mu_); }
        sleep_cv_.notify_all();
    }

    const int64_t by_workers = n_chunks - claim_chunks(0);
    int spins = 0;
    while (chunks_done_.load(std::memory_order_acquire) != by_workers) {
        if (++spins < 4096) {
            PK_CPU_RELAX();
        } else {
            std::this_thread::yield();
        }
    }
    if (worker_error_) {
        std::exception_ptr e = worker_error_;
        worker_error_ = nullptr;
        std::rethrow_exception(e);
    }
}

uint64_t ThreadTeam::wait_for_job(uint64_t seen) {
    // 1) Spin, 2) yield, 3) sleep. The clock is read only every few spins.
    const auto idle_since = Clock::now();
    int spins = 0;
    for (;;) {
        const uint64_t g = generation_.load(std::memory_order_acquire);
        if (g != seen) return stop_.load(std::memory_order_acquire) ? 0 : g;
        if (++spins % kSpinsPerClockRead != 0) {
            PK_CPU_RELAX();
            continue;
        }
        const auto idle = Clock::now() - idle_since;
        if (idle < kSpinFor) continue;
        if (idle < kSleepAfter) {
            std::this_thread::yield();
            continue;
        }
        std::unique_lock<std::mutex> lock(sleep_mu_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        sleep_cv_.wait(lock, [&] { return generation_.load(std::memory_order_seq_cst) != seen; });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        // Loop once more: the generation has moved, the next iteration returns it.
    }
}

void ThreadTeam::worker_main(int ith) {
    uint64_t seen = 0;
    for (;;) {
        const uint64_t g = wait_for_job(seen);
        if (g == 0) return;
        seen = g;
        // One count per pass, not per chunk: the caller spins on this line.
        if (const int64_t ran = claim_chunks(ith)) chunks_done_.fetch_add(ran, std::memory_order_release);
    }
}

}  // namespace pk
