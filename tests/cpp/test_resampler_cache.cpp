// ResamplerCache: a hit returns the same resampler, only the most recently used few are kept,
// an evicted resampler stays valid for whoever holds it, concurrent use is safe (run under
// TSan), and through the C ABI one-sample calls at many distinct rates leave the RSS bounded
// (before the cache was bounded, each odd rate kept its ~11 MB filter table for good).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "model/frontend/resampler_cache.h"
#include "parakeet_capi.h"
#include "pool_test_support.h"

namespace {

using pk::ResamplerCache;

TEST(ResamplerCache, AHitReturnsTheSameResampler) {
    ResamplerCache cache(2);
    const auto a = cache.get(8000, 16000);
    EXPECT_EQ(a, cache.get(8000, 16000));
    EXPECT_EQ(a->in_rate(), 8000);
    EXPECT_EQ(a->out_rate(), 16000);
    EXPECT_NE(a, cache.get(8000, 22050));  // the output rate is part of the key
}

TEST(ResamplerCache, KeepsOnlyTheMostRecentlyUsed) {
    ResamplerCache cache(2);
    const auto r8 = cache.get(8000, 16000);
    cache.get(48000, 16000);
    EXPECT_EQ(cache.get(8000, 16000), r8);  // 8 kHz is now the most recent
    cache.get(44100, 16000);                // evicts 48 kHz, the least recent
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(cache.get(8000, 16000), r8);
    for (int rate = 9000; rate < 9000 + 20 * 100; rate += 100) cache.get(rate, 16000);
    EXPECT_EQ(cache.size(), 2u);
}

TEST(ResamplerCache, AnEvictedResamplerStaysValidForItsHolder) {
    ResamplerCache cache(1);
    const auto held = cache.get(8000, 16000);
    cache.get(48000, 16000);
    EXPECT_NE(cache.get(8000, 16000), held);  // rebuilt: the cache had let it go
    pk::ThreadTeam team(1);
    const std::vector<float> in(80, 0.25f);
    std::vector<float> out(static_cast<size_t>(held->output_length(80)));
    held->process(team, in.data(), 80, out.data());
    EXPECT_NEAR(out[out.size() / 2], 0.25f, 1e-3f);
}

TEST(ResamplerCache, ConcurrentUseIsSafe) {
    ResamplerCache cache(3);
    const int rates[] = {8000, 11025, 22050, 32000, 44100, 48000};
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 30; ++i) {
                const int rate = rates[(t + i) % 6];
                if (cache.get(rate, 16000)->in_rate() != rate) ++wrong;
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_LE(cache.size(), 3u);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PARAKEET_UNDER_SANITIZER 1
#endif

long resident_bytes() {
    long pages = 0, resident = 0;
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) return -1;
    const int n = std::fscanf(f, "%ld %ld", &pages, &resident);
    std::fclose(f);
    return n == 2 ? resident * 4096 : -1;
}

TEST(ResamplerCache, OneSampleCallsAtManyRatesKeepTheRssBounded) {
#ifdef PARAKEET_UNDER_SANITIZER
    GTEST_SKIP() << "the sanitizers' shadow memory makes RSS meaningless";
#else
    parakeet_ctx* ctx = parakeet_capi_load(pool_test::model_path().c_str());
    ASSERT_NE(ctx, nullptr) << parakeet_capi_load_error();
    const float sample = 0.0f;
    // High odd rates: long filters (downsampling by ~24) and more phases than the table
    // holds, so each has the full table of about 11 MB.
    const int n_rates = 30;
    long before = 0;
    for (int i = 0; i < n_rates; ++i) {
        char* text = parakeet_capi_transcribe_pcm(ctx, &sample, 1, 383999 - 2 * i, 0);
        ASSERT_NE(text, nullptr) << parakeet_capi_thread_last_error();
        parakeet_capi_free_string(text);
        if (i == 0) before = resident_bytes();
    }
    const long grown = resident_bytes() - before;
    std::printf("RSS grew by %.1f MB over %d rates\n", grown / 1e6, n_rates - 1);
    parakeet_capi_free(ctx);
    // Unbounded, 29 more tables are ~320 MB; bounded, at most the capacity's worth stays.
    EXPECT_LT(grown, 150L * 1000 * 1000);
#endif
}

}  // namespace
