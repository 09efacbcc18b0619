// Request batching through the C ABI (parakeet_capi_set_request_batching): transcribe calls
// from many threads at once get, call by call, the JSON documents they get with batching off;
// the stats count every request; turning batching off and on while calls run is safe; and bad
// values are clear errors. On the hybrid TDT+CTC fixture model (docs/fixtures.md).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "audio/wav_reader.h"
#include "capi_test_support.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

using capi_test::take;

const std::vector<float>& clip(const std::string& name) {
    static std::map<std::string, std::vector<float>> clips;
    std::vector<float>& c = clips[name];
    if (c.empty()) c = pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/" + name + "_16k.wav", 0).samples;
    return c;
}

// What a thread transcribes: a part of a clip, with a decoder head (0 default, 1 CTC).
struct Call {
    std::string clip;
    int offset, samples, decoder;
};

const Call kCalls[] = {
    {"speech", 0, 48000, 0},      {"conversation", 16000, 40000, 1}, {"short_1s", 0, 16000, 0},
    {"speech", 20000, 1600, 0},   {"conversation", 0, 64000, 0},     {"short_0p1s", 0, 1600, 1},
};

std::string transcribe(parakeet_ctx* ctx, const Call& c) {
    return take(parakeet_capi_transcribe_pcm_json(ctx, clip(c.clip).data() + c.offset, c.samples, 16000, c.decoder));
}

TEST(CapiRequestBatching, ConcurrentCallsGetTheirDocumentsAlone) {
    capi_test::Ctx ctx = capi_test::load(nemo_fixtures::data_dir() + "/nemo/hybrid_tdt_ctc");
    ASSERT_TRUE(ctx);
    std::vector<std::string> alone;
    for (const Call& c : kCalls) alone.push_back(transcribe(ctx.get(), c));
    ASSERT_EQ(parakeet_capi_set_request_batching(ctx.get(), 4, 50), 0) << parakeet_capi_last_error(ctx.get());
    constexpr int kRounds = 3;
    std::vector<std::vector<std::string>> got(std::size(kCalls));
    std::vector<std::thread> threads;
    for (size_t i = 0; i < std::size(kCalls); ++i) {
        threads.emplace_back([&, i] {
            for (int r = 0; r < kRounds; ++r) got[i].push_back(transcribe(ctx.get(), kCalls[i]));
        });
    }
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < std::size(kCalls); ++i)
        for (int r = 0; r < kRounds; ++r) EXPECT_EQ(got[i][r], alone[i]) << "call " << i << ", round " << r;
    const std::string stats = take(parakeet_capi_request_batching_stats_json(ctx.get()));
    EXPECT_NE(stats.find("\"max_batch\":4,\"max_wait_ms\":50,"), std::string::npos) << stats;
    EXPECT_NE(stats.find("\"unbatched\":0}"), std::string::npos) << stats;
    // Every request ran in some batch: the sizes add up to the calls made.
    const size_t open = stats.find("\"batch_sizes\":[") + 15;
    const std::string sizes = stats.substr(open, stats.find(']', open) - open);
    int requests = 0, size = 1;
    for (size_t p = 0; p < sizes.size(); ++size) {
        const size_t comma = sizes.find(',', p);
        requests += size * std::stoi(sizes.substr(p, comma - p));
        p = comma == std::string::npos ? sizes.size() : comma + 1;
    }
    EXPECT_EQ(requests, static_cast<int>(std::size(kCalls)) * kRounds) << stats;
}

// Batching turned off and on again while calls run: each call finishes in the batcher it
// started with, and its document is the one alone.
TEST(CapiRequestBatching, ChangingItWhileCallsRunIsSafe) {
    capi_test::Ctx ctx = capi_test::load(nemo_fixtures::data_dir() + "/nemo/hybrid_tdt_ctc");
    ASSERT_TRUE(ctx);
    const std::string alone = transcribe(ctx.get(), kCalls[0]);
    std::vector<std::thread> threads;
    std::vector<std::string> got(4);
    for (size_t i = 0; i < got.size(); ++i) {
        threads.emplace_back([&, i] {
            for (int r = 0; r < 3; ++r) got[i] = transcribe(ctx.get(), kCalls[0]);
        });
    }
    for (int k = 0; k < 6; ++k) EXPECT_EQ(parakeet_capi_set_request_batching(ctx.get(), k % 2 == 0 ? 3 : 0, 5), 0);
    for (std::thread& t : threads) t.join();
    for (const std::string& g : got) EXPECT_EQ(g, alone);
    EXPECT_EQ(take(parakeet_capi_request_batching_stats_json(ctx.get())),
              "{\"max_batch\":0,\"max_wait_ms\":0,\"batches\":0,\"batch_sizes\":[],\"waited_ms_max\":0.000,"
              "\"waited_ms_mean\":0.000,\"unbatched\":0}");
}

TEST(CapiRequestBatching, BadValuesAreClearErrors) {
    EXPECT_EQ(parakeet_capi_set_request_batching(nullptr, 4, 10), -1);
    EXPECT_EQ(parakeet_capi_request_batching_stats_json(nullptr), nullptr);
    capi_test::Ctx ctx = capi_test::load(nemo_fixtures::data_dir() + "/nemo/hybrid_tdt_ctc");
    ASSERT_TRUE(ctx);
    EXPECT_EQ(parakeet_capi_set_request_batching(ctx.get(), -1, 10), -1);
    EXPECT_EQ(std::string(parakeet_capi_last_error(ctx.get())),
              "set_request_batching: max_batch and max_wait_ms must not be negative");
    EXPECT_EQ(parakeet_capi_set_request_batching(ctx.get(), 4, -5), -1);
}

}  // namespace
