// ThreadTeam: every thread runs exactly its slice, jobs never overlap, exceptions reach the
// caller, parallel_for covers each index once, and a team shuts down cleanly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <time.h>
#include <vector>

#include "runtime/thread_team.h"

namespace {

TEST(ThreadTeam, EveryThreadRunsItsSliceOncePerJob) {
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

TEST(ThreadTeam, CallerIsThreadZero) {
    pk::ThreadTeam team(3);
    const auto caller = std::this_thread::get_id();
    std::thread::id seen;
    team.run([&](int ith, int) {
        if (ith == 0) seen = std::this_thread::get_id();
    });
    EXPECT_EQ(seen, caller);
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

TEST(ParallelFor, SmallJobsRunInlineWithoutDispatch) {
    pk::ThreadTeam team(4);
    const uint64_t before = team.jobs_dispatched();
    int calls = 0;
    pk::parallel_for(team, 10, 8, [&](int64_t b, int64_t e) {
        ++calls;
        EXPECT_EQ(b, 0);
        EXPECT_EQ(e, 10);
    });
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(team.jobs_dispatched(), before);
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
