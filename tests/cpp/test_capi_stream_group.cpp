// Stream groups through the C ABI (parakeet_capi_stream_group_*): streams fed from their own
// threads in a group get, call by call, the JSON documents they get alone; streams join and
// leave mid-stream; a lone member runs at once and a chunk waits for others at most the
// group's max_wait; a stream fed much audio runs one chunk per batch; one member's bad input is
// its own error; and every misuse is a clear error. On the cache-aware fixture models and on
// offline ones streamed with buffered windows, each in its own group, both at once
// (docs/fixtures.md).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "audio/wav_reader.h"
#include "capi_test_support.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

using capi_test::take;

std::string model_dir(const std::string& name) { return nemo_fixtures::data_dir() + "/nemo/" + name; }

const std::vector<float>& clip(const std::string& name) {
    static std::map<std::string, std::vector<float>> clips;
    std::vector<float>& c = clips[name];
    if (c.empty()) c = pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/" + name + "_16k.wav", 0).samples;
    return c;
}

struct StreamDeleter {
    void operator()(parakeet_stream* s) const { parakeet_capi_stream_free(s); }
};
using Stream = std::unique_ptr<parakeet_stream, StreamDeleter>;

struct GroupDeleter {
    void operator()(parakeet_stream_group* g) const { parakeet_capi_stream_group_free(g); }
};
using Group = std::unique_ptr<parakeet_stream_group, GroupDeleter>;

// What a stream is fed: `samples` samples of a clip from `offset`, `feed` at a time.
struct Feeding {
    std::string clip;
    int64_t offset, samples;
    int feed;
};

const Feeding kFeedings[] = {
    {"speech", 0, 48000, 1600},      {"conversation", 16000, 40000, 1600}, {"speech", 30000, 30000, 2400},
    {"short_1s", 0, 16000, 800},     {"conversation", 60000, 24000, 3200},
};

// The feed_json documents of feeding s, then finalize_json's; with a group, s joins it before
// feed `join_at` and (leave_at >= 0) leaves it before feed `leave_at`.
std::vector<std::string> feed_all(parakeet_stream* s, const Feeding& f, parakeet_stream_group* group = nullptr,
                                  int join_at = -1, int leave_at = -1) {
    const float* audio = clip(f.clip).data() + f.offset;
    std::vector<std::string> docs;
    int feeds = 0;
    for (int64_t at = 0; at < f.samples; at += f.feed, ++feeds) {
        if (feeds == join_at) EXPECT_EQ(parakeet_capi_stream_group_join(group, s), 0);
        if (feeds == leave_at) EXPECT_EQ(parakeet_capi_stream_group_leave(group, s), 0);
        const int n = static_cast<int>(std::min<int64_t>(f.feed, f.samples - at));
        docs.push_back(take(parakeet_capi_stream_feed_json(s, audio + at, n)));
    }
    docs.push_back(take(parakeet_capi_stream_finalize_json(s)));
    return docs;
}

// Stream options of the buffered streams (short windows, so that the clips make many chunks);
// cache-aware streams take the defaults.
const char* kBufferedWindow = R"({"left_sec": 1, "chunk_sec": 0.5, "right_sec": 0.5})";

bool is_offline(const std::string& model) { return model.rfind("ca_", 0) != 0; }

// The same on a new stream of ctx (joining from the first feed on when a group is given),
// begun with `options` (NULL: the defaults).
std::vector<std::string> run_stream(parakeet_ctx* ctx, const Feeding& f, parakeet_stream_group* group = nullptr,
                                    int join_at = 0, int leave_at = -1, const char* options = nullptr) {
    Stream s(options != nullptr ? parakeet_capi_stream_begin_with(ctx, options) : parakeet_capi_stream_begin(ctx));
    EXPECT_NE(s, nullptr);
    return feed_all(s.get(), f, group, group != nullptr ? join_at : -1, leave_at);
}

std::vector<std::vector<std::string>> alone_runs(parakeet_ctx* ctx, const char* options = nullptr) {
    std::vector<std::vector<std::string>> out;
    for (const Feeding& f : kFeedings) out.push_back(run_stream(ctx, f, nullptr, 0, -1, options));
    return out;
}

// The streams of `name` (each Feeding on its own thread) in a group of max_batch: each gets
// what it gets alone.
void expect_grouped_runs_alone(const std::string& name, int max_batch) {
    SCOPED_TRACE(name + ", max_batch " + std::to_string(max_batch));
    const char* options = is_offline(name) ? kBufferedWindow : nullptr;
    const capi_test::Ctx ctx = capi_test::load(model_dir(name));
    ASSERT_NE(ctx, nullptr);
    const auto alone = alone_runs(ctx.get(), options);
    Group g(parakeet_capi_stream_group_new(ctx.get(), max_batch, 20));
    ASSERT_NE(g, nullptr) << parakeet_capi_thread_last_error();
    std::vector<std::vector<std::string>> grouped(std::size(kFeedings));
    std::vector<std::thread> threads;
    for (size_t i = 0; i < std::size(kFeedings); ++i)
        threads.emplace_back([&, i] { grouped[i] = run_stream(ctx.get(), kFeedings[i], g.get(), 0, -1, options); });
    for (auto& t : threads) t.join();
    for (size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(grouped[i], alone[i]) << "stream " << i;
    EXPECT_EQ(parakeet_capi_stream_group_size(g.get()), 0) << "freed streams leave their group";
    EXPECT_EQ(take(parakeet_capi_stream_group_stats_json(g.get())).find("\"batches\":0,"), std::string::npos);
}

TEST(CapiStreamGroup, StreamsOnThreadsGetWhatTheyGetAlone) {
    for (const char* name : {"ca_eou", "ca_hybrid", "ca_tdt"})
        for (const int max_batch : {2, 8}) expect_grouped_runs_alone(name, max_batch);
}

TEST(CapiStreamGroup, BufferedStreamsOnThreadsGetWhatTheyGetAlone) {
    for (const char* name : {"tdt", "rnnt", "ctc", "hybrid_tdt_ctc"})
        for (const int max_batch : {2, 3, 8}) expect_grouped_runs_alone(name, max_batch);
}

// A cache-aware model's group and an offline model's group, busy at the same time.
TEST(CapiStreamGroup, CacheAwareAndBufferedGroupsRunSideBySide) {
    std::thread cache_aware([] { expect_grouped_runs_alone("ca_hybrid", 4); });
    expect_grouped_runs_alone("hybrid_tdt_ctc", 4);
    cache_aware.join();
}

// A new stream of ctx that has joined g.
Stream member(parakeet_ctx* ctx, parakeet_stream_group* g) {
    Stream s(parakeet_capi_stream_begin(ctx));
    EXPECT_NE(s, nullptr);
    EXPECT_EQ(parakeet_capi_stream_group_join(g, s.get()), 0);
    return s;
}

// Two members that both feed, max_batch 2 and a minute of max_wait: no chunk runs until both
// wait, so every batch holds both streams (or the test times out).
TEST(CapiStreamGroup, MembersThatAllWaitRunAsOneBatch) {
    const capi_test::Ctx ctx = capi_test::load(model_dir("ca_hybrid"));
    ASSERT_NE(ctx, nullptr);
    const Feeding a{"speech", 0, 40000, 1600}, b{"conversation", 0, 40000, 1600};
    const auto alone_a = run_stream(ctx.get(), a), alone_b = run_stream(ctx.get(), b);
    Group g(parakeet_capi_stream_group_new(ctx.get(), 2, 60000));
    Stream sa = member(ctx.get(), g.get()), sb = member(ctx.get(), g.get());
    std::vector<std::string> got_a, got_b;
    std::thread ta([&] { got_a = feed_all(sa.get(), a); });
    std::thread tb([&] { got_b = feed_all(sb.get(), b); });
    ta.join();
    tb.join();
    EXPECT_EQ(got_a, alone_a);
    EXPECT_EQ(got_b, alone_b);
    // Every batch held two streams, and there were some.
    const std::string stats = take(parakeet_capi_stream_group_stats_json(g.get()));
    EXPECT_NE(stats.find("\"batch_sizes\":[0,"), std::string::npos) << stats;
    EXPECT_EQ(stats.find("\"batches\":0,"), std::string::npos) << stats;
}

TEST(CapiStreamGroup, StreamsJoinAndLeaveMidStream) {
    const capi_test::Ctx ctx = capi_test::load(model_dir("ca_rnnt_multi"));
    ASSERT_NE(ctx, nullptr);
    const auto alone = alone_runs(ctx.get());
    Group g(parakeet_capi_stream_group_new(ctx.get(), 4, 10));
    ASSERT_NE(g, nullptr);
    std::vector<std::vector<std::string>> grouped(std::size(kFeedings));
    std::vector<std::thread> threads;
    for (size_t i = 0; i < std::size(kFeedings); ++i) {
        const int join_at = static_cast<int>(i) * 3, leave_at = i % 2 == 0 ? join_at + 12 : -1;
        threads.emplace_back([&, i, join_at, leave_at] {
            grouped[i] = run_stream(ctx.get(), kFeedings[i], g.get(), join_at, leave_at);
        });
    }
    for (auto& t : threads) t.join();
    for (size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(grouped[i], alone[i]) << "stream " << i;
}

// The first number of the stats' batch_sizes: how many batches held one stream.
int64_t lone_batches(parakeet_stream_group* g) {
    const std::string stats = take(parakeet_capi_stream_group_stats_json(g));
    const size_t at = stats.find("\"batch_sizes\":[");
    EXPECT_NE(at, std::string::npos) << stats;
    return at == std::string::npos ? -1 : std::stoll(stats.substr(at + 15));
}

// Fairness: a member fed 3 s at once runs one chunk per batch. Its first chunk waits for the
// other member (max_batch 2, a minute of max_wait), which feeds one chunk's worth and
// finalizes; once that member has left, the rest of the 3 s run as batches of one, one per
// chunk (a batch that ran every ready chunk of its streams would run them as one). Results
// stay what each stream gets alone.
TEST(CapiStreamGroup, AStreamFedMuchAudioTakesOneChunkPerBatch) {
    const capi_test::Ctx ctx = capi_test::load(model_dir("ca_tdt"));
    ASSERT_NE(ctx, nullptr);
    const Feeding big{"speech", 0, 48000, 48000}, small{"conversation", 0, 3200, 3200};
    const auto alone_big = run_stream(ctx.get(), big), alone_small = run_stream(ctx.get(), small);
    Group g(parakeet_capi_stream_group_new(ctx.get(), 2, 60000));
    Stream a = member(ctx.get(), g.get()), b = member(ctx.get(), g.get());
    std::vector<std::string> got_big;
    std::thread ta([&] { got_big = feed_all(a.get(), big); });
    const std::vector<std::string> got_small = feed_all(b.get(), small);
    b.reset();  // leaves the group: `a` runs alone from here on
    ta.join();
    EXPECT_EQ(got_big, alone_big);
    EXPECT_EQ(got_small, alone_small);
    // 3 s in 240 ms chunks, one or two of them beside `b`: a dozen batches of one (1 when a
    // batch ran all of its streams' ready chunks).
    EXPECT_GE(lone_batches(g.get()), 8);
}

double seconds_of_feed(parakeet_stream* s, const float* pcm, int n) {
    const auto t0 = std::chrono::steady_clock::now();
    take(parakeet_capi_stream_feed(s, pcm, n, nullptr));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(CapiStreamGroup, ALoneMemberRunsAtOnceAndAChunkWaitsAtMostMaxWait) {
    const capi_test::Ctx ctx = capi_test::load(model_dir("ca_tdt"));
    ASSERT_NE(ctx, nullptr);
    const std::vector<float>& audio = clip("speech");
    {
        // An hour of max_wait, one member: its chunks run at once (a wait would hang the test
        // for the hour; the bound below is half of it, so a slow machine cannot fail it).
        Group g(parakeet_capi_stream_group_new(ctx.get(), 8, 3600000));
        Stream s(parakeet_capi_stream_begin(ctx.get()));
        ASSERT_EQ(parakeet_capi_stream_group_join(g.get(), s.get()), 0);
        EXPECT_LT(seconds_of_feed(s.get(), audio.data(), 16000), 1800.0);
    }
    {
        // Two members, one feeding: its chunk waits for the other until max_wait, then runs.
        // The wait is long next to a one-sample feed, so a busy machine cannot blur the two.
        Group g(parakeet_capi_stream_group_new(ctx.get(), 8, 2000));
        Stream a(parakeet_capi_stream_begin(ctx.get())), b(parakeet_capi_stream_begin(ctx.get()));
        ASSERT_EQ(parakeet_capi_stream_group_join(g.get(), a.get()), 0);
        ASSERT_EQ(parakeet_capi_stream_group_join(g.get(), b.get()), 0);
        EXPECT_GE(seconds_of_feed(a.get(), audio.data(), 16000), 2.0);
        // A feed that completes no chunk does not wait.
        EXPECT_LT(seconds_of_feed(a.get(), audio.data() + 16000, 1), 2.0);
    }
}

TEST(CapiStreamGroup, OneMembersBadInputIsItsOwnError) {
    const capi_test::Ctx ctx = capi_test::load(model_dir("ca_eou"));
    ASSERT_NE(ctx, nullptr);
    const auto alone = alone_runs(ctx.get());
    Group g(parakeet_capi_stream_group_new(ctx.get(), 4, 10));
    std::vector<std::vector<std::string>> grouped(2);
    std::thread good0([&] { grouped[0] = run_stream(ctx.get(), kFeedings[0], g.get()); });
    std::thread good1([&] { grouped[1] = run_stream(ctx.get(), kFeedings[1], g.get()); });
    Stream bad(parakeet_capi_stream_begin(ctx.get()));
    ASSERT_EQ(parakeet_capi_stream_group_join(g.get(), bad.get()), 0);
    std::vector<float> audio(clip("speech").begin(), clip("speech").begin() + 8000);
    audio[4000] = std::numeric_limits<float>::quiet_NaN();
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(parakeet_capi_stream_feed(bad.get(), audio.data(), 8000, nullptr), nullptr);
        EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_INVALID_AUDIO);
        EXPECT_NE(std::string(parakeet_capi_thread_last_error()).find("is not a finite number"), std::string::npos)
            << parakeet_capi_thread_last_error();
    }
    bad.reset();  // leaves the group, so the others need not wait for it
    good0.join();
    good1.join();
    EXPECT_EQ(grouped[0], alone[0]);
    EXPECT_EQ(grouped[1], alone[1]);
}

TEST(CapiStreamGroup, MisuseIsAClearError) {
    const capi_test::Ctx ctx = capi_test::load(model_dir("ca_tdt"));
    const capi_test::Ctx other = capi_test::load(model_dir("ca_eou"));
    const capi_test::Ctx offline = capi_test::load(model_dir("tdt"));
    ASSERT_TRUE(ctx && other && offline);
    auto error = [] { return std::string(parakeet_capi_thread_last_error()); };

    EXPECT_EQ(parakeet_capi_stream_group_new(nullptr, 4, 10), nullptr);
    EXPECT_EQ(parakeet_capi_stream_group_new(ctx.get(), 0, 10), nullptr);
    EXPECT_EQ(error(), "stream group: max_batch must be at least 1");
    EXPECT_EQ(parakeet_capi_stream_group_new(ctx.get(), 4, -1), nullptr);
    EXPECT_EQ(error(), "stream group: max_wait_ms must not be negative");
    Group buffered_group(parakeet_capi_stream_group_new(offline.get(), 4, 10));
    EXPECT_NE(buffered_group, nullptr) << "offline models' buffered streams batch too";

    Group g(parakeet_capi_stream_group_new(ctx.get(), 4, 10)), h(parakeet_capi_stream_group_new(ctx.get(), 4, 10));
    ASSERT_TRUE(g && h);
    Stream s(parakeet_capi_stream_begin(ctx.get())), foreign(parakeet_capi_stream_begin(other.get()));
    Stream buffered(parakeet_capi_stream_begin(offline.get()));
    EXPECT_EQ(parakeet_capi_stream_group_join(nullptr, s.get()), 1);
    EXPECT_EQ(error(), "stream group is NULL");
    EXPECT_EQ(parakeet_capi_stream_group_join(g.get(), nullptr), 1);
    EXPECT_EQ(error(), "stream is NULL");
    EXPECT_EQ(parakeet_capi_stream_group_join(g.get(), foreign.get()), 1);
    EXPECT_EQ(error(), "stream group: the stream is of another context's model");
    EXPECT_EQ(parakeet_capi_stream_group_join(g.get(), buffered.get()), 1);
    EXPECT_EQ(error(), "stream group: the stream is of another context's model");
    EXPECT_EQ(parakeet_capi_stream_group_join(buffered_group.get(), s.get()), 1);
    EXPECT_EQ(error(), "stream group: the stream is of another context's model");
    EXPECT_EQ(parakeet_capi_stream_group_leave(g.get(), s.get()), 1);
    EXPECT_EQ(error(), "stream_group_leave: the stream is not in this group");
    ASSERT_EQ(parakeet_capi_stream_group_join(g.get(), s.get()), 0);
    EXPECT_EQ(parakeet_capi_stream_group_join(g.get(), s.get()), 1);
    EXPECT_EQ(error(), "stream_group_join: the stream is in this group already");
    EXPECT_EQ(parakeet_capi_stream_group_join(h.get(), s.get()), 1);
    EXPECT_EQ(error(), "stream_group_join: the stream is in another group");
    EXPECT_EQ(parakeet_capi_stream_group_size(g.get()), 1);
    EXPECT_EQ(parakeet_capi_stream_group_size(nullptr), -1);

    parakeet_capi_stream_group_free(g.get());  // refused: s is a member
    EXPECT_EQ(error(), "stream_group_free: 1 stream(s) are still in the group; leave or free them first");
    EXPECT_EQ(parakeet_capi_stream_group_size(g.get()), 1) << "the group stays valid";
    ASSERT_EQ(parakeet_capi_stream_group_leave(g.get(), s.get()), 0);
    take(parakeet_capi_stream_finalize(s.get()));
    EXPECT_EQ(parakeet_capi_stream_group_join(g.get(), s.get()), 1);
    EXPECT_EQ(error(), "stream_group_join: the stream is finalized");
    parakeet_capi_stream_group_free(nullptr);  // no-op
}

}  // namespace
