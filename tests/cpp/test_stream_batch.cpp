// CacheAwareBatch: cache-aware streams run together give every stream the updates and the
// transcript it gets alone, bit for bit (token confidences included), through the batched
// encoder step and the batched greedy decode (StreamDecoder::decode_batch). Batches of 1, 2, 3 and 7
// streams of each cache-aware fixture model (docs/fixtures.md): RNN-T, TDT, CTC and a hybrid's
// two heads side by side, <EOU>/<EOB> events, a prompt model's locales side by side, a model's
// contexts side by side; streams that join at different rounds (first chunks beside later
// ones), that are fed different amounts, and that finish while others go on (a last short
// chunk beside full ones). At every ISA level this CPU has, at 1 and 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "common/errors.h"
#include "default_threads.h"
#include "isa_levels.h"
#include "model/model.h"
#include "model/stream/cache_aware_batch.h"
#include "model/stream/cache_aware_stream.h"
#include "nemo_fixtures.h"

namespace {

// How a stream is made.
struct Head {
    pk::AttContext context;
    pk::DecoderChoice decoder = pk::DecoderChoice::Transducer;
    std::string language;
};

// What a stream is fed.
struct Feeding {
    std::string clip;       // tests/data/audio/<clip>_16k.wav
    int64_t offset = 0;     // first sample of the clip it streams
    int64_t samples = 0;    // how many (0: to the clip's end)
    int join = 0;           // the round of its first feed
    int64_t feed = 1600;    // samples per round
};

struct Spec {
    Head head;
    Feeding feeding;
};

// Seven streams: long and short ones, joining at rounds 0 to 4, fed 0.05 to 0.25 s a round;
// the batches of 1, 2 and 3 take the first ones.
const Feeding kFeedings[] = {
    {"speech", 0, 40000, 0, 1600},      {"conversation", 16000, 30000, 1, 1600}, {"speech", 8000, 24000, 0, 2400},
    {"short_1s", 0, 0, 2, 1600},        {"short_0p1s", 0, 0, 3, 1600},           {"conversation", 0, 36000, 1, 4000},
    {"speech", 64000, 0, 4, 800},
};

struct Case {
    std::string model;       // tests/data/nemo/<model>
    std::vector<Head> heads; // stream i: heads[i] fed kFeedings[i]
    std::vector<Spec> streams() const {
        std::vector<Spec> out;
        for (size_t i = 0; i < heads.size(); ++i) out.push_back({heads[i], kFeedings[i]});
        return out;
    }
};

const pk::DecoderChoice kRnnt = pk::DecoderChoice::Transducer, kCtc = pk::DecoderChoice::Ctc;

// Per model, the heads of its seven streams: a model's contexts, a hybrid's two heads, a
// prompt model's locales side by side.
std::vector<Case> cases() {
    const auto same = [](Head h) { return std::vector<Head>(std::size(kFeedings), h); };
    return {
        {"ca_rnnt_multi",
         {{{8, 1}}, {{8, 0}}, {{8, 3}}, {{8, 1}}, {{8, 1}}, {{8, 3}}, {{8, 0}}}},
        {"ca_hybrid",
         {{{4, 3}, kRnnt}, {{4, 3}, kCtc}, {{4, 3}, kCtc}, {{4, 3}, kRnnt}, {{4, 3}, kRnnt}, {{4, 3}, kCtc},
          {{4, 3}, kRnnt}}},
        {"ca_eou", same({{8, 1}})},
        {"ca_tdt", same({{6, 2}})},
        {"ca_prompt",
         {{{4, 1}, kRnnt, "en-US"}, {{4, 1}, kRnnt, "de-DE"}, {{4, 1}, kCtc, "ja-JP"}, {{4, 1}, kCtc, ""},
          {{4, 1}, kRnnt, "auto"}, {{4, 1}, kRnnt, "ja-JP"}, {{4, 1}, kCtc, "de-DE"}}},
    };
}

std::vector<float> audio_of(const Feeding& s) {
    static std::map<std::string, std::vector<float>> clips;
    std::vector<float>& clip = clips[s.clip];
    if (clip.empty()) clip = pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/" + s.clip + "_16k.wav", 0).samples;
    const auto first = clip.begin() + std::min<int64_t>(s.offset, static_cast<int64_t>(clip.size()));
    const auto last = s.samples > 0 ? first + std::min<int64_t>(s.samples, clip.end() - first) : clip.end();
    return {first, last};
}

// Everything a stream reports: each round's update (none before it joins), then its transcript.
struct StreamRun {
    std::vector<pk::StreamUpdate> updates;
    pk::Transcript transcript;
};

std::unique_ptr<pk::CacheAwareStream> make_stream(const pk::Model& model, const Head& h) {
    return std::make_unique<pk::CacheAwareStream>(model, h.context, h.decoder, h.language);
}

// The number of feeds of a stream (its last round feeds the rest); finalize follows.
int64_t feeds_of(const Feeding& s, int64_t n) { return std::max<int64_t>(1, (n + s.feed - 1) / s.feed); }

StreamRun run_alone(const pk::Model& model, const Spec& spec) {
    const Feeding& s = spec.feeding;
    const std::vector<float> audio = audio_of(s);
    const int64_t n = static_cast<int64_t>(audio.size());
    auto stream = make_stream(model, spec.head);
    StreamRun r;
    for (int64_t i = 0; i < feeds_of(s, n); ++i) {
        const int64_t at = std::min(n, i * s.feed);
        r.updates.push_back(stream->feed(audio.data() + at, std::min(s.feed, n - at)));
    }
    r.updates.push_back(stream->finalize());
    r.transcript = stream->transcript();
    return r;
}

// Every stream through one CacheAwareBatch per round: a stream that has joined takes its
// round's audio (or, after its last feed, the end of the audio), the batch runs, each of them
// takes its update.
std::vector<StreamRun> run_batched(const pk::Model& model, const std::vector<Spec>& specs) {
    std::vector<std::vector<float>> audio;
    std::vector<std::unique_ptr<pk::CacheAwareStream>> streams;
    for (const Spec& s : specs) {
        audio.push_back(audio_of(s.feeding));
        streams.push_back(make_stream(model, s.head));
    }
    std::vector<StreamRun> runs(specs.size());
    for (int round = 0;; ++round) {
        std::vector<pk::CacheAwareStream*> active;
        for (size_t i = 0; i < specs.size(); ++i) {
            const Feeding& s = specs[i].feeding;
            const int64_t n = static_cast<int64_t>(audio[i].size()), k = round - s.join;
            if (k < 0 || k > feeds_of(s, n)) continue;
            if (k < feeds_of(s, n)) {
                const int64_t at = std::min(n, k * s.feed);
                streams[i]->take_audio(audio[i].data() + at, std::min(s.feed, n - at));
            } else {
                streams[i]->end_audio();
            }
            active.push_back(streams[i].get());
        }
        if (active.empty()) break;
        {
            const pk::BackendLease lease = model.lease_backend();
            pk::CacheAwareBatch(active).run(lease.backend());
        }
        for (size_t i = 0; i < specs.size(); ++i)
            if (std::find(active.begin(), active.end(), streams[i].get()) != active.end())
                runs[i].updates.push_back(streams[i]->take_update());
    }
    for (size_t i = 0; i < specs.size(); ++i) runs[i].transcript = streams[i]->transcript();
    return runs;
}

void expect_same_tokens(const std::vector<pk::TranscriptToken>& a, const std::vector<pk::TranscriptToken>& b,
                        const std::string& what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_TRUE(a[i].id == b[i].id && a[i].frame == b[i].frame && a[i].duration == b[i].duration &&
                    a[i].confidence == b[i].confidence)
            << what << ": token " << i;
    }
}

void expect_same_run(const StreamRun& alone, const StreamRun& batched, const std::string& what) {
    ASSERT_EQ(alone.updates.size(), batched.updates.size()) << what;
    for (size_t u = 0; u < alone.updates.size(); ++u) {
        const pk::StreamUpdate &a = alone.updates[u], &b = batched.updates[u];
        const std::string at = what + ", update " + std::to_string(u);
        EXPECT_EQ(a.text, b.text) << at;
        EXPECT_EQ(a.partial, b.partial) << at;
        EXPECT_EQ(a.chunks, b.chunks) << at;
        EXPECT_EQ(a.final_sec, b.final_sec) << at;
        EXPECT_EQ(a.finalized, b.finalized) << at;
        expect_same_tokens(a.tokens, b.tokens, at);
        ASSERT_EQ(a.words.size(), b.words.size()) << at;
        for (size_t w = 0; w < a.words.size(); ++w)
            EXPECT_TRUE(a.words[w].text == b.words[w].text && a.words[w].confidence == b.words[w].confidence) << at;
        ASSERT_EQ(a.events.size(), b.events.size()) << at;
        for (size_t e = 0; e < a.events.size(); ++e)
            EXPECT_TRUE(a.events[e].token == b.events[e].token && a.events[e].frame == b.events[e].frame) << at;
    }
    EXPECT_EQ(alone.transcript.text, batched.transcript.text) << what;
    expect_same_tokens(alone.transcript.tokens, batched.transcript.tokens, what + ", transcript");
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.model; }

class StreamBatch : public ::testing::TestWithParam<Case> {};

TEST_P(StreamBatch, EveryStreamGetsWhatItGetsAlone) {
    const Case& c = GetParam();
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        const pk::Model& model = nemo_fixtures::cached_model(nemo_fixtures::data_dir() + "/nemo/" + c.model, isa);
        for (const int threads : {1, 2}) {
            test_threads::with_default_threads(threads, [&] {
                const std::vector<Spec> all = c.streams();
                std::vector<StreamRun> alone;
                for (const Spec& s : all) alone.push_back(run_alone(model, s));
                for (const size_t b : {size_t{1}, size_t{2}, size_t{3}, all.size()}) {
                    const std::vector<Spec> specs(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(b));
                    const std::vector<StreamRun> batched = run_batched(model, specs);
                    for (size_t i = 0; i < b; ++i)
                        expect_same_run(alone[i], batched[i], "stream " + std::to_string(i) + " of a batch of " +
                                                                  std::to_string(b) + " at " +
                                                                  std::to_string(threads) + " threads");
                }
            });
        }
    });
}

// The streams say something: a comparison of empty transcripts would prove nothing.
TEST_P(StreamBatch, StreamsDecodeTokensAndEvents) {
    const Case& c = GetParam();
    const pk::Model& model =
        nemo_fixtures::cached_model(nemo_fixtures::data_dir() + "/nemo/" + c.model, isa_test::highest_level());
    size_t tokens = 0, events = 0;
    for (const Spec& s : c.streams()) {
        const StreamRun r = run_alone(model, s);
        tokens += r.transcript.tokens.size();
        for (const auto& u : r.updates) events += u.events.size();
    }
    EXPECT_GT(tokens, 20u);
    if (c.model == "ca_eou") EXPECT_GT(events, 0u);
}

TEST(StreamBatchErrors, RefusesEmptyNullRepeatedAndMixedModels) {
    const pk::Model& a = nemo_fixtures::cached_model(nemo_fixtures::data_dir() + "/nemo/ca_tdt", isa_test::highest_level());
    const pk::Model& b = nemo_fixtures::cached_model(nemo_fixtures::data_dir() + "/nemo/ca_eou", isa_test::highest_level());
    pk::CacheAwareStream s1(a, {6, 2}, kRnnt), s2(b, {8, 1}, kRnnt);
    EXPECT_THROW(pk::CacheAwareBatch({}), pk::InvalidArgument);
    EXPECT_THROW(pk::CacheAwareBatch({&s1, nullptr}), pk::InvalidArgument);
    EXPECT_THROW(pk::CacheAwareBatch({&s1, &s1}), pk::InvalidArgument);
    EXPECT_THROW(pk::CacheAwareBatch({&s1, &s2}), pk::InvalidArgument);
}

TEST(StreamBatchErrors, TheHalvesOfFeedCheckAsFeedDoes) {
    const pk::Model& m = nemo_fixtures::cached_model(nemo_fixtures::data_dir() + "/nemo/ca_tdt", isa_test::highest_level());
    pk::CacheAwareStream s(m, {6, 2}, kRnnt);
    const float bad[2] = {0.0f, std::numeric_limits<float>::quiet_NaN()};
    EXPECT_THROW(s.take_audio(bad, 2), pk::InvalidAudio);
    EXPECT_THROW(s.take_audio(nullptr, 5), pk::InvalidArgument);
    s.end_audio();
    EXPECT_THROW(s.end_audio(), pk::InvalidArgument);
    EXPECT_THROW(s.take_audio(bad, 1), pk::InvalidArgument);
    EXPECT_TRUE(s.take_update().finalized);
    EXPECT_FALSE(s.chunk_ready());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, StreamBatch, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.model; });

}  // namespace
