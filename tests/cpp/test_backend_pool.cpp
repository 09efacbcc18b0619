// BackendPool: routing, lease limits, reentrancy, waiting callers, first-come-first-served
// fairness, and shutdown while callers wait. No model involved.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "process_threads.h"
#include "runtime/backend_pool.h"

namespace {

using namespace std::chrono_literals;

TEST(BackendPool, HandsOutDistinctBackendsUpToItsSize) {
    pk::BackendPool pool(3, 2);
    EXPECT_EQ(pool.size(), 3);
    EXPECT_EQ(pool.threads_each(), 2);
    // Three threads hold a lease each at the same time.
    std::mutex mu;
    std::set<pk::Backend*> distinct;
    std::atomic<int> holding{0};
    std::atomic<bool> release{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
        threads.emplace_back([&] {
            auto lease = pool.acquire();
            EXPECT_EQ(lease.backend().n_threads(), 2);
            {
                std::lock_guard<std::mutex> lock(mu);
                distinct.insert(&lease.backend());
            }
            ++holding;
            while (!release) std::this_thread::sleep_for(1ms);
        });
    while (holding < 3) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(pool.in_use(), 3);
    EXPECT_EQ(distinct.size(), 3u);
    release = true;
    for (auto& t : threads) t.join();
    EXPECT_EQ(pool.in_use(), 0);
}

TEST(BackendPool, NeverLendsMoreThanItHas) {
    pk::BackendPool pool(2, 1);
    std::atomic<int> now{0}, peak{0};
    std::mutex seen_mu;
    std::set<pk::Backend*> seen;
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 50; ++i) {
                auto lease = pool.acquire();
                const int n = ++now;
                int p = peak.load();
                while (n > p && !peak.compare_exchange_weak(p, n)) {
                }
                {
                    std::lock_guard<std::mutex> lock(seen_mu);
                    seen.insert(&lease.backend());
                }
                std::this_thread::sleep_for(50us);
                --now;
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_LE(peak.load(), 2);
    EXPECT_EQ(pool.peak_in_use(), 2);
    EXPECT_EQ(seen.size(), 2u);  // both backends were used
    EXPECT_EQ(pool.total_leases(), 400u);
    EXPECT_EQ(pool.in_use(), 0);
}

TEST(BackendPool, ReentrantAcquireReusesTheThreadsBackend) {
    pk::BackendPool pool(1, 1);
    auto outer = pool.acquire();
    EXPECT_FALSE(outer.reentrant());
    auto inner = pool.acquire();  // would deadlock if it waited for the only backend
    EXPECT_TRUE(inner.reentrant());
    EXPECT_EQ(&inner.backend(), &outer.backend());
    EXPECT_EQ(pool.in_use(), 1);
    inner = pk::BackendPool::Lease();
    EXPECT_EQ(pool.in_use(), 1);  // the inert lease returned nothing
}

TEST(BackendPool, WaitingCallerGetsTheBackendWhenItIsReturned) {
    pk::BackendPool pool(1, 1);
    auto first = pool.acquire();
    std::atomic<bool> got{false};
    std::thread waiter([&] {
        auto lease = pool.acquire();
        got = true;
    });
    std::this_thread::sleep_for(30ms);
    EXPECT_FALSE(got.load());
    EXPECT_EQ(pool.waiting(), 1);
    first = pk::BackendPool::Lease();
    waiter.join();
    EXPECT_TRUE(got.load());
}

TEST(BackendPool, CallersAreServedInArrivalOrder) {
    pk::BackendPool pool(1, 1);
    auto holder = pool.acquire();
    std::mutex order_mu;
    std::vector<int> order;
    std::vector<std::thread> threads;
    for (int i = 0; i < 6; ++i) {
        threads.emplace_back([&, i] {
            auto lease = pool.acquire();
            std::lock_guard<std::mutex> lock(order_mu);
            order.push_back(i);
        });
        // Each caller is queued before the next one starts.
        while (pool.waiting() < i + 1) std::this_thread::sleep_for(1ms);
    }
    holder = pk::BackendPool::Lease();
    for (auto& t : threads) t.join();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(BackendPool, NoCallerStarvesUnderContention) {
    pk::BackendPool pool(1, 1);
    std::atomic<bool> stop{false};
    std::vector<std::thread> greedy;
    for (int t = 0; t < 4; ++t)
        greedy.emplace_back([&] {
            while (!stop) auto lease = pool.acquire();
        });
    // A latecomer must get its turn promptly despite four threads re-acquiring in a loop.
    const auto t0 = std::chrono::steady_clock::now();
    { auto lease = pool.acquire(); }
    const auto waited = std::chrono::steady_clock::now() - t0;
    stop = true;
    for (auto& t : greedy) t.join();
    EXPECT_LT(waited, 2s);
}

TEST(BackendPool, ReplacedPoolFinishesItsWaitersThenLeavesNoThreads) {
    const int before = process_thread_count();
    auto pool = std::make_shared<pk::BackendPool>(1, 3);  // 3 - 1 worker threads
    EXPECT_EQ(process_thread_count_settling_to(before + 2), before + 2);
    std::atomic<int> served{0};
    std::vector<std::thread> callers;
    {
        pk::BackendLease busy(pool);  // the only backend is taken
        for (int i = 0; i < 4; ++i)
            callers.emplace_back([snapshot = pool, &served] {
                pk::BackendLease lease(snapshot);  // waits on the old pool
                lease.backend().team().run([](int, int) {});
                ++served;
            });
        while (pool->waiting() < 4) std::this_thread::sleep_for(1ms);
        pool.reset();  // the owner swaps the pool out while callers wait
    }
    for (auto& t : callers) t.join();
    EXPECT_EQ(served.load(), 4);
    // The last lease destroyed the pool and joined its workers.
    EXPECT_EQ(process_thread_count_settling_to(before), before);
}

TEST(BackendLease, DefaultBackendIsExclusiveAndReentrant) {
    std::shared_ptr<pk::BackendPool> none;
    std::atomic<bool> got{false};
    std::thread other;
    {
        pk::BackendLease outer(none);
        EXPECT_EQ(&outer.backend(), &pk::default_backend());
        pk::BackendLease inner(none);  // same thread: no deadlock
        EXPECT_EQ(&inner.backend(), &outer.backend());
        other = std::thread([&] {
            pk::BackendLease l(none);
            got = true;
        });
        std::this_thread::sleep_for(30ms);
        EXPECT_FALSE(got.load());  // waits while this thread holds the default backend
    }
    other.join();
    EXPECT_TRUE(got.load());
}

}  // namespace
