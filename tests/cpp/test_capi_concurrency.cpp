// The C ABI under concurrency: set_concurrency's return values; parakeet_capi_last_error(ctx)
// stays a whole message while many threads fail and succeed on one context; and
// parakeet_capi_thread_last_error() is exactly the calling thread's own error.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "parakeet_capi.h"
#include "pool_test_support.h"

namespace {

struct Ctx {
    parakeet_ctx* ctx = parakeet_capi_load(pool_test::model_path().c_str());
    ~Ctx() { parakeet_capi_free(ctx); }
};

TEST(CapiConcurrency, SetConcurrencyReturnsTheEffectiveBackendCount) {
    Ctx c;
    ASSERT_NE(c.ctx, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_set_concurrency(c.ctx, 0, 0), 1);
    EXPECT_EQ(parakeet_capi_set_concurrency(c.ctx, 1, 0), 1);
    EXPECT_EQ(parakeet_capi_set_concurrency(c.ctx, -7, 3), 1);
    EXPECT_EQ(parakeet_capi_set_concurrency(c.ctx, 3, 1), 3);
    EXPECT_EQ(parakeet_capi_set_concurrency(c.ctx, 3, 1), 3);  // same shape again
    EXPECT_EQ(parakeet_capi_set_concurrency(c.ctx, 1 << 30, 1), 64);
    EXPECT_EQ(parakeet_capi_set_concurrency(c.ctx, 2, -1), 2);
    EXPECT_EQ(parakeet_capi_set_concurrency(nullptr, 2, 1), -1);
    EXPECT_EQ(parakeet_capi_set_concurrency(c.ctx, 1, 0), 1);
}

// Each failing call carries a number only its thread uses (a negative sample count), so the
// message identifies the call it came from.
std::string expected_error(int n) { return "the number of samples is negative (" + std::to_string(n) + ")"; }

TEST(CapiConcurrency, ThreadErrorsAreExactAndContextErrorsAreWhole) {
    Ctx c;
    ASSERT_NE(c.ctx, nullptr) << parakeet_capi_load_error();
    parakeet_capi_set_concurrency(c.ctx, 2, 1);
    const auto clips = pool_test::clips();
    const auto& clip = clips[2];  // 0.1 s: cheap successes
    const int n_threads = 6, calls = pool_test::quick() ? 20 : 100;

    std::set<std::string> possible = {""};
    for (int t = 0; t < n_threads; ++t)
        for (int i = 0; i < calls; ++i) possible.insert(expected_error(-(t * 1000 + i + 1)));

    std::atomic<bool> done{false};
    std::atomic<int> torn{0}, wrong_thread_error{0};
    std::thread reader([&] {
        while (!done) {
            const std::string e = parakeet_capi_last_error(c.ctx);
            if (!possible.count(e)) ++torn;
        }
    });
    std::vector<std::thread> threads;
    for (int t = 0; t < n_threads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < calls; ++i) {
                if ((i + t) % 3 == 0) {
                    char* text = parakeet_capi_transcribe_pcm(c.ctx, clip.data(), static_cast<int>(clip.size()), 16000, 0);
                    if (text == nullptr || std::string(parakeet_capi_thread_last_error()) != "") ++wrong_thread_error;
                    parakeet_capi_free_string(text);
                } else {
                    const int n = -(t * 1000 + i + 1);
                    char* text = parakeet_capi_transcribe_pcm(c.ctx, clip.data(), n, 16000, 0);
                    if (text != nullptr || std::string(parakeet_capi_thread_last_error()) != expected_error(n))
                        ++wrong_thread_error;
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    done = true;
    reader.join();
    EXPECT_EQ(torn.load(), 0);
    EXPECT_EQ(wrong_thread_error.load(), 0);
    parakeet_capi_set_concurrency(c.ctx, 1, 0);
}

TEST(CapiConcurrency, LoadErrorsAreThreadLocal) {
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            const std::string path = "/nonexistent/model-" + std::to_string(t) + ".gguf";
            for (int i = 0; i < 20; ++i) {
                if (parakeet_capi_load(path.c_str()) != nullptr) ++wrong;
                if (std::string(parakeet_capi_load_error()).find(path) == std::string::npos) ++wrong;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
