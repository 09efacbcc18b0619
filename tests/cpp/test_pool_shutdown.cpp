// Pools leave nothing behind: after a pool is replaced or removed and its last request has
// finished, its threads are gone; results are equal across create/destroy cycles; under
// AddressSanitizer the cycles leak nothing.
#include <gtest/gtest.h>

#include <thread>

#include "pool_test_support.h"

namespace {

TEST(PoolShutdown, NoThreadsLeftAfterThePoolIsRemoved) {
    auto model = pk::Model::load(pool_test::model_path());
    const auto clips = pool_test::clips();
    const auto& clip = clips[1];
    // Warm the process-wide backend so its workers are counted in the baseline.
    model->transcribe(clip.data(), static_cast<int64_t>(clip.size()), 16000, pk::DecoderChoice::Default);
    const int baseline = pool_test::thread_count();

    EXPECT_EQ(model->set_concurrency(3, 2), 3);
    EXPECT_EQ(process_thread_count_settling_to(baseline + 3), baseline + 3);  // 3 backends x (2 - 1) workers
    EXPECT_EQ(model->set_concurrency(2, 3), 2);
    EXPECT_EQ(process_thread_count_settling_to(baseline + 4), baseline + 4);  // the old pool is gone already
    EXPECT_EQ(model->set_concurrency(1, 0), 1);
    EXPECT_EQ(process_thread_count_settling_to(baseline), baseline);
    EXPECT_EQ(model->pool_working_set_bytes(), 0u);
}

TEST(PoolShutdown, ResultsEqualAcrossCreateDestroyCycles) {
    const auto clips = pool_test::clips();
    std::vector<pk::Transcript> first;
    const int cycles = pool_test::quick() ? 2 : 5;
    for (int cycle = 0; cycle < cycles; ++cycle) {
        auto model = pk::Model::load(pool_test::model_path());
        model->set_concurrency(2 + cycle % 2, 1);
        std::vector<pk::Transcript> results(clips.size());
        std::vector<std::thread> threads;
        for (size_t i = 0; i < clips.size(); ++i)
            threads.emplace_back([&, i] {
                results[i] = model->transcribe(clips[i].data(), static_cast<int64_t>(clips[i].size()), 16000,
                                               pk::DecoderChoice::Default);
            });
        for (auto& t : threads) t.join();
        EXPECT_GT(model->pool_working_set_bytes(), 0u);
        if (cycle == 0) first = results;
        for (size_t i = 0; i < clips.size(); ++i) EXPECT_TRUE(pool_test::same(results[i], first[i])) << i;
        // The model (and its pool) is destroyed here, joining the pool's workers.
    }
}

TEST(PoolShutdown, RemovingThePoolWaitsForRunningRequestsOnly) {
    auto model = pk::Model::load(pool_test::model_path());
    const auto clips = pool_test::clips();
    const int baseline = pool_test::thread_count();
    model->set_concurrency(2, 2);
    std::thread caller([&] {
        for (int i = 0; i < 3; ++i)
            model->transcribe(clips[0].data(), static_cast<int64_t>(clips[0].size()), 16000, pk::DecoderChoice::Default);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    model->set_concurrency(1, 0);  // the running request keeps its (old) pool alive
    caller.join();
    EXPECT_LE(pool_test::thread_count(), baseline + 1);  // at most the default backend's worker appeared
}

}  // namespace
