// run_stream_batch: live streams run together give every stream the updates and the transcript
// it gets alone, bit for bit (token confidences included), through the batched encoder pass and
// the batched greedy decode (StreamDecoder::decode_batch). Batches of 1, 2, 3 and 7 streams of
// each cache-aware fixture model (docs/fixtures.md, CacheAwareBatch): RNN-T, TDT, CTC and a
// hybrid's two heads side by side, <EOU>/<EOB> events, a prompt model's locales side by side, a
// model's contexts side by side; and of each offline fixture model streamed with buffered
// windows (ChunkedBatch): windows of different left / chunk / right sizes side by side, a
// hybrid's two heads side by side. Streams join at different rounds (first chunks beside later
// ones), are fed different amounts, and finish while others go on (a last short chunk beside
// full ones). At every ISA level this CPU has, at 1 and 2 threads.
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
#include "model/stream/chunked_stream.h"
#include "model/stream/stream_batch.h"
#include "nemo_fixtures.h"

namespace {

// How a stream is made: a cache-aware model's with `context` and `language`, an offline
// model's with the buffered window `window` (left, chunk, right seconds).
struct Head {
    pk::AttContext context;
    pk::DecoderChoice decoder = pk::DecoderChoice::Transducer;
    std::string language;
    std::vector<double> window;
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

// A buffered stream's head: its window (seconds) and decoder.
Head buffered(double left, double chunk, double right, pk::DecoderChoice d = pk::DecoderChoice::Transducer) {
    return {{}, d, {}, {left, chunk, right}};
}

// Per model, the heads of its seven streams: a model's contexts, a hybrid's two heads, a
// prompt model's locales, an offline model's windows side by side.
std::vector<Case> cases() {
    const auto same = [](Head h) { return std::vector<Head>(std::size(kFeedings), h); };
    const auto windows = [](pk::DecoderChoice d) {
        return std::vector<Head>{buffered(1, 0.5, 0.5, d), buffered(2, 0.5, 0.25, d), buffered(0.5, 0.25, 0, d),
                                 buffered(1, 0.5, 0.5, d), buffered(0, 1, 0.5, d),    buffered(1, 0.25, 0.5, d),
                                 buffered(2, 1, 1, d)};
    };
    return {
        {"tdt", windows(kRnnt)},
        {"rnnt", windows(kRnnt)},
        {"ctc", windows(kCtc)},
        {"hybrid_tdt_ctc",
         {buffered(1, 0.5, 0.5, kRnnt), buffered(1, 0.5, 0.5, kCtc), buffered(2, 0.5, 0.25, kCtc),
          buffered(0.5, 0.25, 0, kRnnt), buffered(1, 0.5, 0.5, kRnnt), buffered(1, 0.25, 0.5, kCtc),
          buffered(2, 1, 1, kRnnt)}},
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

std::unique_ptr<pk::LiveStream> make_stream(const pk::Model& model, const Head& h) {
    if (h.window.empty()) return std::make_unique<pk::CacheAwareStream>(model, h.context, h.decoder, h.language);
    pk::StreamSettings w;
    w.left_sec = h.window[0];
    w.chunk_sec = h.window[1];
    w.right_sec = h.window[2];
    w.decoder = h.decoder;
    return std::make_unique<pk::ChunkedStream>(model, w);
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

// Every stream through one run_stream_batch per round: a stream that has joined takes its
// round's audio (or, after its last feed, the end of the audio), the batch runs, each of them
// takes its update.
std::vector<StreamRun> run_batched(const pk::Model& model, const std::vector<Spec>& specs) {
    std::vector<std::vector<float>> audio;
    std::vector<std::unique_ptr<pk::LiveStream>> streams;
    for (const Spec& s : specs) {
        audio.push_back(audio_of(s.feeding));
        streams.push_back(make_stream(model, s.head));
    }
    std::vector<StreamRun> runs(specs.size());
    for (int round = 0;; ++round) {
        std::vector<pk::LiveStream*> active;
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
            pk::run_stream_batch(active, lease.backend());
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

const pk::Model& fixture(const char* name) {
    return nemo_fixtures::cached_model(nemo_fixtures::data_dir() + "/nemo/" + name, isa_test::highest_level());
}

TEST(StreamBatchErrors, RefusesEmptyNullRepeatedAndMixedModels) {
    const pk::Model &a = fixture("ca_tdt"), &b = fixture("ca_eou");
    pk::CacheAwareStream s1(a, {6, 2}, kRnnt), s2(b, {8, 1}, kRnnt);
    EXPECT_THROW(pk::CacheAwareBatch({}), pk::InvalidArgument);
    EXPECT_THROW(pk::CacheAwareBatch({&s1, nullptr}), pk::InvalidArgument);
    EXPECT_THROW(pk::CacheAwareBatch({&s1, &s1}), pk::InvalidArgument);
    EXPECT_THROW(pk::CacheAwareBatch({&s1, &s2}), pk::InvalidArgument);
    const auto b1 = make_stream(fixture("tdt"), buffered(1, 0.5, 0.5));
    const auto b2 = make_stream(fixture("rnnt"), buffered(1, 0.5, 0.5));
    const pk::BackendLease lease = a.lease_backend();
    EXPECT_THROW(pk::run_stream_batch({}, lease.backend()), pk::InvalidArgument);
    EXPECT_THROW(pk::run_stream_batch({b1.get(), nullptr}, lease.backend()), pk::InvalidArgument);
    EXPECT_THROW(pk::run_stream_batch({b1.get(), b1.get()}, lease.backend()), pk::InvalidArgument);
    EXPECT_THROW(pk::run_stream_batch({b1.get(), b2.get()}, lease.backend()), pk::InvalidArgument);
    EXPECT_THROW(pk::run_stream_batch({&s1, b1.get()}, lease.backend()), pk::InvalidArgument);
    EXPECT_THROW(pk::run_stream_batch({b1.get(), &s1}, lease.backend()), pk::InvalidArgument);
}

TEST(StreamBatchErrors, TheHalvesOfFeedCheckAsFeedDoes) {
    const pk::Model& m = fixture("ca_tdt");
    const std::unique_ptr<pk::LiveStream> streams[] = {
        std::make_unique<pk::CacheAwareStream>(m, pk::AttContext{6, 2}, kRnnt),
        make_stream(fixture("tdt"), buffered(1, 0.5, 0.5))};
    for (const auto& s : streams) {
        const float bad[2] = {0.0f, std::numeric_limits<float>::quiet_NaN()};
        EXPECT_THROW(s->take_audio(bad, 2), pk::InvalidAudio);
        EXPECT_THROW(s->take_audio(nullptr, 5), pk::InvalidArgument);
        s->end_audio();
        EXPECT_THROW(s->end_audio(), pk::InvalidArgument);
        EXPECT_THROW(s->take_audio(bad, 1), pk::InvalidArgument);
        EXPECT_TRUE(s->take_update().finalized);
        EXPECT_FALSE(s->chunk_ready());
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, StreamBatch, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.model; });

}  // namespace
