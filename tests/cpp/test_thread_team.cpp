// ThreadTeam: every slice and every chunk runs exactly once, also when a worker is delayed or
// arrives late, jobs never overlap, exceptions reach the caller, parallel_for covers each index
// once, and a team shuts down cleanly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <time.h>
#include <vector>

#include "runtime/thread_team.h"

namespace {

TEST(ThreadTeam, EverySliceRunsOncePerJob) {
    for (int n : {1, 2, 3, 4, 7}) {
        pk::ThreadTeam team(n);
        ASSERT_EQ(team.size(), n);
        for (int job = 0; job < 200; ++job) {
            std::vector<std::atomic<int>> hits(n);
            team.run([&](int ith, int nth) {
                EXPECT_EQ(nth, n);
                hits[ith].fetch_add(1);
            });
            for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
        }
    }
}

// Per-thread scratch relies on this: the caller is thread 0, and within one job a thread index
// always names the same OS thread.
TEST(ThreadTeam, ThreadIndexNamesOneOsThreadAndTheCallerIsZero) {
    pk::ThreadTeam team(3);
    for (int job = 0; job < 50; ++job) {
        std::vector<std::thread::id> seen(64);
        std::vector<int> by(64, -1);
        team.run_chunks(64, [&](int64_t c, int t) {
            seen[static_cast<size_t>(c)] = std::this_thread::get_id();
            by[static_cast<size_t>(c)] = t;
        });
        std::vector<std::thread::id> of_thread(3);
        for (size_t c = 0; c < 64; ++c) {
            ASSERT_GE(by[c], 0);
            ASSERT_LT(by[c], 3);
            auto& id = of_thread[static_cast<size_t>(by[c])];
            if (id == std::thread::id()) id = seen[c];
            ASSERT_EQ(id, seen[c]) << "thread index " << by[c] << " ran on two OS threads";
        }
        if (of_thread[0] != std::thread::id()) EXPECT_EQ(of_thread[0], std::this_thread::get_id());
    }
}

TEST(ThreadTeam, RunChunksRunsEveryChunkExactlyOnce) {
    for (int n : {1, 2, 3, 4}) {
        pk::ThreadTeam team(n);
        for (int64_t chunks : {0, 1, 2, 3, 7, 64, 1000}) {
            for (int job = 0; job < 20; ++job) {
                std::vector<std::atomic<int>> hits(static_cast<size_t>(chunks));
                team.run_chunks(chunks, [&](int64_t c, int t) {
                    EXPECT_GE(t, 0);
                    EXPECT_LT(t, n);
                    hits[static_cast<size_t>(c)].fetch_add(1);
                });
                for (int64_t c = 0; c < chunks; ++c) {
                    ASSERT_EQ(hits[static_cast<size_t>(c)].load(), 1) << "n=" << n << " chunk " << c;
                }
            }
        }
    }
}

// A worker stuck in a slow chunk does not hold the others back: the caller claims the rest.
// (A static split would leave half the chunks to the stuck worker.)
TEST(ThreadTeam, CallerTakesTheChunksOfADelayedWorker) {
    pk::ThreadTeam team(2);
    constexpr int64_t kChunks = 64;
    std::vector<std::atomic<int>> hits(kChunks);
    std::atomic<bool> worker_stuck{false};
    std::atomic<int> by_caller{0};
    // Events, not sleeps, order the two threads; the deadline only turns a broken team (one
    // that leaves the stuck worker's chunks to it) into a failure instead of a hang.
    const auto hang_guard = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const auto before_guard = [&] { return std::chrono::steady_clock::now() < hang_guard; };
    team.run_chunks(kChunks, [&](int64_t c, int t) {
        if (t == 0) {
            by_caller.fetch_add(1);
            // Hold the caller until the worker is inside a chunk, so that the rest is to share.
            while (!worker_stuck.load() && before_guard()) std::this_thread::yield();
        } else if (!worker_stuck.exchange(true)) {
            // The worker's first chunk ends only once the caller has run every other chunk,
            // which it can only do by claiming the worker's range.
            while (by_caller.load() < kChunks - 1 && before_guard()) std::this_thread::yield();
        }
        hits[static_cast<size_t>(c)].fetch_add(1);
    });
    for (int64_t c = 0; c < kChunks; ++c) ASSERT_EQ(hits[static_cast<size_t>(c)].load(), 1) << c;
    EXPECT_GE(by_caller.load(), kChunks / 2 + 1);
    EXPECT_TRUE(worker_stuck.load());
}

// Workers that fell asleep wake up late, often after the caller has already run every chunk
// (and started the next job): they must find nothing left, never re-run a finished job's
// chunk, and never take a chunk of the next job twice.
TEST(ThreadTeam, LateWorkersFindNothingLeft) {
    for (int n : {2, 3, 4}) {
        pk::ThreadTeam team(n);
        for (int round = 0; round < 3; ++round) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the sleep threshold
            for (int job = 0; job < 200; ++job) {
                std::vector<std::atomic<int>> hits(5);
                team.run_chunks(5, [&](int64_t c, int) { hits[static_cast<size_t>(c)].fetch_add(1); });
                for (size_t c = 0; c < 5; ++c) ASSERT_EQ(hits[c].load(), 1) << "n=" << n << " job " << job;
            }
        }
    }
}

TEST(ThreadTeam, ChunkExceptionIsRethrownAndTheTeamStaysUsable) {
    for (int n : {1, 2, 4}) {
        pk::ThreadTeam team(n);
        std::atomic<int> running{0};
        try {
            team.run_chunks(32, [&](int64_t c, int) {
                running.fetch_add(1);
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                running.fetch_sub(1);
                if (c == 17) throw std::runtime_error("chunk 17 failed");
            });
            ADD_FAILURE() << "n=" << n << ": no exception";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "chunk 17 failed");
            // Rethrown only once no chunk is running any more.
            EXPECT_EQ(running.load(), 0) << "n=" << n;
        }
        std::atomic<int> after{0};
        team.run_chunks(8, [&](int64_t, int) { after.fetch_add(1); });
        EXPECT_EQ(after.load(), 8);
    }
}

TEST(ThreadTeam, RunReturnsOnlyAfterEverySliceFinished) {
    pk::ThreadTeam team(4);
    std::atomic<int> finished{0};
    team.run([&](int ith, int) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2 * ith));
        finished.fetch_add(1);
    });
    EXPECT_EQ(finished.load(), 4);
}

TEST(ThreadTeam, WorkerExceptionIsRethrownToCaller) {
    pk::ThreadTeam team(3);
    EXPECT_THROW(team.run([](int ith, int) {
        if (ith == 2) throw std::runtime_error("slice 2 failed");
    }),
                 std::runtime_error);
    // The team stays usable afterwards.
    std::atomic<int> count{0};
    team.run([&](int, int) { count.fetch_add(1); });
    EXPECT_EQ(count.load(), 3);
}

TEST(ThreadTeam, WakesUpAfterWorkersFellAsleep) {
    pk::ThreadTeam team(3);
    for (int round = 0; round < 3; ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the sleep threshold
        std::atomic<int> count{0};
        team.run([&](int, int) { count.fetch_add(1); });
        EXPECT_EQ(count.load(), 3);
    }
}

TEST(ThreadTeam, ManyTeamsCreatedAndDestroyed) {
    for (int i = 0; i < 50; ++i) {
        pk::ThreadTeam team(1 + i % 4);
        std::atomic<int> count{0};
        if (i % 2) team.run([&](int, int) { count.fetch_add(1); });
        EXPECT_EQ(count.load(), i % 2 ? 1 + i % 4 : 0);
    }
}

TEST(ParallelFor, CoversEveryIndexExactlyOnce) {
    for (int n_threads : {1, 2, 3, 4}) {
        pk::ThreadTeam team(n_threads);
        for (int64_t n : {0, 1, 2, 5, 17, 100, 1001}) {
            for (int64_t grain : {1, 3, 64}) {
                std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
                pk::parallel_for(team, n, grain, [&](int64_t b, int64_t e) {
                    ASSERT_LE(b, e);
                    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
                });
                for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1);
            }
        }
    }
}

// Runs parallel_for(n, grain) and expects one inline call f(0, n) with no dispatch.
void expect_one_inline_call(pk::ThreadTeam& team, int64_t n, int64_t grain) {
    const uint64_t before = team.jobs_dispatched();
    int calls = 0;
    pk::parallel_for(team, n, grain, [&](int64_t b, int64_t e) {
        ++calls;
        EXPECT_EQ(b, 0);
        EXPECT_EQ(e, n);
    });
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(team.jobs_dispatched(), before);
}

TEST(ParallelFor, SmallJobsRunInlineWithoutDispatch) {
    pk::ThreadTeam team(4);
    expect_one_inline_call(team, 10, 8);
}

TEST(ParallelFor, OneThreadRunsTheWholeRangeAsOneCall) {
    pk::ThreadTeam team(1);
    expect_one_inline_call(team, 1000, 1);
}

TEST(ParallelFor, CutsAFewChunksPerThread) {
    pk::ThreadTeam team(2);
    std::atomic<int> chunks{0};
    pk::parallel_for(team, 1000, 1, [&](int64_t, int64_t) { chunks.fetch_add(1); });
    EXPECT_EQ(chunks.load(), 2 * pk::kParallelForChunksPerThread);
}

TEST(ParallelFor, ChunksAreAtLeastTheGrain) {
    pk::ThreadTeam team(4);
    std::atomic<int> chunks{0};
    pk::parallel_for(team, 100, 40, [&](int64_t b, int64_t e) {
        EXPECT_GE(e - b, 40);
        chunks.fetch_add(1);
    });
    EXPECT_EQ(chunks.load(), 2);
}

}  // namespace

namespace {

double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// An idle team must not spin: after its workers went to sleep, the process burns (almost)
// no CPU. The bound is loose (a spinning pair of workers would burn ~200 ms here).
TEST(ThreadTeam, IdleWorkersSleep) {
    pk::ThreadTeam team(3);
    team.run([](int, int) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const double cpu0 = process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_LT(process_cpu_seconds() - cpu0, 0.02);
}

}  // namespace
