// Many threads over a pool of K backends, for several (threads, K, threads_each) settings,
// including more threads than backends and a pool swap while requests run: every result is
// bitwise equal to the result without a pool. PARAKEET_STRESS_QUICK=1 runs fewer rounds (for
// sanitizer builds).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "pool_test_support.h"

namespace {

struct Setting {
    int callers, backends, threads_each;
};

class PoolStress : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        model_ = pk::Model::load(pool_test::model_path()).release();
        clips_ = new std::vector<std::vector<float>>(pool_test::clips());
        // References: no pool, the process-wide backend.
        references_ = new std::vector<pk::Transcript>();
        for (const auto& c : *clips_)
            for (auto d : {pk::DecoderChoice::Transducer, pk::DecoderChoice::Ctc})
                references_->push_back(model_->transcribe(c.data(), static_cast<int64_t>(c.size()), 16000, d));
    }
    static void TearDownTestSuite() {
        delete model_;
        delete clips_;
        delete references_;
    }

    // Each caller transcribes every clip with both heads `rounds` times, in its own order.
    static int run_callers(int callers, int rounds, const std::function<void()>& during = {}) {
        std::atomic<int> mismatches{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < callers; ++t) {
            threads.emplace_back([&, t] {
                const size_t n = references_->size();
                for (int r = 0; r < rounds; ++r) {
                    for (size_t k = 0; k < n; ++k) {
                        const size_t job = (k + static_cast<size_t>(t)) % n;
                        const auto& clip = (*clips_)[job / 2];
                        const auto d = job % 2 == 0 ? pk::DecoderChoice::Transducer : pk::DecoderChoice::Ctc;
                        const auto got = model_->transcribe(clip.data(), static_cast<int64_t>(clip.size()), 16000, d);
                        if (!pool_test::same(got, (*references_)[job])) ++mismatches;
                    }
                }
            });
        }
        if (during) during();
        for (auto& th : threads) th.join();
        return mismatches.load();
    }

    static pk::Model* model_;
    static std::vector<std::vector<float>>* clips_;
    static std::vector<pk::Transcript>* references_;
};

pk::Model* PoolStress::model_ = nullptr;
std::vector<std::vector<float>>* PoolStress::clips_ = nullptr;
std::vector<pk::Transcript>* PoolStress::references_ = nullptr;

TEST_F(PoolStress, EveryResultEqualsTheNoPoolResult) {
    const int rounds = pool_test::quick() ? 1 : 3;
    for (const Setting s : {Setting{4, 2, 1}, Setting{8, 4, 1}, Setting{6, 3, 2}, Setting{3, 1, 0}, Setting{5, 8, 1}}) {
        SCOPED_TRACE("callers=" + std::to_string(s.callers) + " backends=" + std::to_string(s.backends) +
                     " threads_each=" + std::to_string(s.threads_each));
        const int k = model_->set_concurrency(s.backends, s.threads_each);
        EXPECT_EQ(k, s.backends <= 1 ? 1 : s.backends);
        EXPECT_EQ(run_callers(s.callers, rounds), 0);
    }
    model_->set_concurrency(1, 0);
}

TEST_F(PoolStress, PoolSwapWhileRequestsRun) {
    const int rounds = pool_test::quick() ? 2 : 6;
    const int mismatches = run_callers(4, rounds, [&] {
        // Swap pools of different shapes under the running callers, then remove the pool.
        for (int i = 0; i < (pool_test::quick() ? 4 : 12); ++i) {
            model_->set_concurrency(1 + i % 3, 1 + i % 2);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        model_->set_concurrency(1, 0);
    });
    EXPECT_EQ(mismatches, 0);
}

}  // namespace
