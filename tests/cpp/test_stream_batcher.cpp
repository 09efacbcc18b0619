// StreamBatcher's scheduling when every backend is busy: the chunks that queue meanwhile run
// as one batch once a backend frees, instead of each taking a batch of its own and waiting
// with it for a backend. On the cache-aware <EOU> fixture model, one backend.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <future>
#include <thread>
#include <vector>

#include "audio/wav_reader.h"
#include "model/model.h"
#include "model/stream/cache_aware_stream.h"
#include "model/stream/stream_batcher.h"
#include "nemo_fixtures.h"

namespace {

TEST(StreamBatcher, ChunksQueuedWhileTheBackendIsBusyRunAsOneBatch) {
    const auto model = pk::Model::load(nemo_fixtures::data_dir() + "/nemo/ca_eou/model.gguf");
    ASSERT_EQ(model->set_concurrency(1, 1), 1);
    const std::vector<float> audio =
        pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/speech_16k.wav", 0).samples;
    constexpr int kStreams = 3;
    pk::StreamBatcher batcher(*model, kStreams, /*max_wait_ms=*/0);  // a chunk is due at once
    std::vector<std::unique_ptr<pk::CacheAwareStream>> streams;
    for (int i = 0; i < kStreams; ++i) {
        streams.push_back(std::make_unique<pk::CacheAwareStream>(*model, model->config().enc.att_contexts[0],
                                                                 pk::DecoderChoice::Transducer));
        batcher.join(*streams.back());
        streams.back()->take_audio(audio.data(), 4000);  // 0.25 s: one chunk or more
        ASSERT_TRUE(streams.back()->chunk_ready());
    }
    // The backend is busy until `release` is set.
    std::promise<void> leased, release;
    std::thread holder([&] {
        const pk::BackendLease lease = model->lease_backend();
        leased.set_value();
        release.get_future().wait();
    });
    leased.get_future().wait();
    std::vector<std::thread> feeds;
    for (auto& s : streams) feeds.emplace_back([&batcher, &s] { batcher.run(*s); });
    // Every stream queues while the backend is busy (a minute at most, for a loaded machine).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (batcher.waiting() < kStreams && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const int queued = batcher.waiting();
    release.set_value();
    holder.join();
    for (std::thread& t : feeds) t.join();
    ASSERT_EQ(queued, kStreams) << "a stream left the queue while the backend was busy";
    const pk::StreamBatcher::Stats stats = batcher.stats();
    EXPECT_EQ(stats.batch_sizes[kStreams - 1], stats.batch_sizes[0] + stats.batch_sizes[1] + stats.batch_sizes[2])
        << "every batch held all three streams";
    EXPECT_GE(stats.batch_sizes[kStreams - 1], 1);
}

}  // namespace
