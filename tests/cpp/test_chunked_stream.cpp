// ChunkedStream's contracts beyond NeMo parity (test_nemo_parity_stream): many streams share a
// pool of fewer backends and give exactly the single-stream results, whatever threads feed
// them; the updates' texts, words and tokens add up to the final transcript; bad input is an
// InvalidArgument and leaves the stream usable.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "audio/wav_reader.h"
#include "common/errors.h"
#include "model/model.h"
#include "model/stream/chunked_stream.h"
#include "nemo_fixtures.h"

namespace {

std::unique_ptr<pk::Model> load(const char* name) {
    return pk::Model::load(nemo_fixtures::data_dir() + "/nemo/" + name + "/model.gguf");
}

std::vector<float> clip() {
    return pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/speech_16k.wav", 0).samples;
}

pk::StreamSettings settings(pk::DecoderChoice d) {
    pk::StreamSettings s;
    s.left_sec = 4;
    s.chunk_sec = 1;
    s.right_sec = 1;
    s.decoder = d;
    return s;
}

struct StreamRun {
    std::vector<pk::TranscriptToken> tokens;  // from the updates
    std::vector<pk::TranscriptWord> words;    // from the updates
    std::string text;                         // the updates' texts concatenated
    pk::Transcript transcript;
};

StreamRun stream(const pk::Model& m, const std::vector<float>& audio, size_t block, pk::DecoderChoice d) {
    pk::ChunkedStream s(m, settings(d));
    StreamRun r;
    const auto take = [&](pk::StreamUpdate u) {
        r.tokens.insert(r.tokens.end(), u.tokens.begin(), u.tokens.end());
        r.words.insert(r.words.end(), u.words.begin(), u.words.end());
        r.text += u.text;
    };
    for (size_t i = 0; i < audio.size(); i += block)
        take(s.feed(audio.data() + i, static_cast<int64_t>(std::min(block, audio.size() - i))));
    take(s.finalize());
    r.transcript = s.transcript();
    return r;
}

void expect_same_tokens(const std::vector<pk::TranscriptToken>& a, const std::vector<pk::TranscriptToken>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].id, b[i].id) << i;
        EXPECT_EQ(a[i].frame, b[i].frame) << i;
        EXPECT_EQ(a[i].duration, b[i].duration) << i;
        EXPECT_EQ(std::memcmp(&a[i].confidence, &b[i].confidence, sizeof(float)), 0) << i;
    }
}

TEST(ChunkedStream, UpdatesAddUpToTheTranscript) {
    const auto m = load("hybrid_tdt_ctc");
    const std::vector<float> audio = clip();
    for (pk::DecoderChoice d : {pk::DecoderChoice::Transducer, pk::DecoderChoice::Ctc}) {
        const StreamRun r = stream(*m, audio, 4799, d);
        ASSERT_FALSE(r.transcript.tokens.empty());
        expect_same_tokens(r.tokens, r.transcript.tokens);
        EXPECT_EQ(r.text, r.transcript.text);
        ASSERT_EQ(r.words.size(), r.transcript.words.size());
        for (size_t i = 0; i < r.words.size(); ++i) {
            EXPECT_EQ(r.words[i].text, r.transcript.words[i].text) << i;
            EXPECT_EQ(r.words[i].start_sec, r.transcript.words[i].start_sec) << i;
            EXPECT_EQ(r.words[i].end_sec, r.transcript.words[i].end_sec) << i;
            EXPECT_EQ(r.words[i].first_token, r.transcript.words[i].first_token) << i;
        }
    }
}

TEST(ChunkedStream, MoreStreamsThanBackendsGiveTheSingleStreamResults) {
    const auto m = load("hybrid_tdt_ctc");
    const std::vector<float> audio = clip();
    const StreamRun ref_tdt = stream(*m, audio, 16000, pk::DecoderChoice::Transducer);
    const StreamRun ref_ctc = stream(*m, audio, 16000, pk::DecoderChoice::Ctc);
    m->set_concurrency(2, 1);
    constexpr int kStreams = 6;
    std::vector<StreamRun> runs(kStreams);
    std::vector<std::thread> threads;
    for (int i = 0; i < kStreams; ++i) {
        threads.emplace_back([&, i] {
            const auto d = i % 2 ? pk::DecoderChoice::Ctc : pk::DecoderChoice::Transducer;
            runs[static_cast<size_t>(i)] = stream(*m, audio, 1000 + 1777 * static_cast<size_t>(i), d);
        });
    }
    for (auto& t : threads) t.join();
    for (int i = 0; i < kStreams; ++i) {
        const StreamRun& ref = i % 2 ? ref_ctc : ref_tdt;
        expect_same_tokens(runs[static_cast<size_t>(i)].transcript.tokens, ref.transcript.tokens);
        EXPECT_EQ(runs[static_cast<size_t>(i)].text, ref.text);
    }
}

TEST(ChunkedStream, ResultsDoNotDependOnTheThreadCount) {
    const auto m = load("rnnt");
    const std::vector<float> audio = clip();
    m->set_concurrency(2, 1);
    const StreamRun one = stream(*m, audio, 8000, pk::DecoderChoice::Default);
    m->set_concurrency(2, 2);
    const StreamRun two = stream(*m, audio, 8000, pk::DecoderChoice::Default);
    expect_same_tokens(one.transcript.tokens, two.transcript.tokens);
}

TEST(ChunkedStream, BadInputIsRefusedAndTheStreamGoesOn) {
    const auto m = load("rnnt");
    pk::ChunkedStream s(*m, settings(pk::DecoderChoice::Default));
    std::vector<float> audio = clip();
    EXPECT_THROW(s.feed(nullptr, 10), pk::InvalidArgument);
    EXPECT_THROW(s.feed(audio.data(), -1), pk::InvalidArgument);
    std::vector<float> bad(100, 0.f);
    bad[50] = std::nanf("");
    EXPECT_THROW(s.feed(bad.data(), 100), pk::InvalidAudio);
    EXPECT_NO_THROW(s.feed(nullptr, 0));
    s.feed(audio.data(), static_cast<int64_t>(audio.size()));
    s.finalize();
    EXPECT_EQ(s.transcript().text, stream(*m, audio, audio.size(), pk::DecoderChoice::Default).transcript.text);
    EXPECT_THROW(s.feed(audio.data(), 10), pk::InvalidArgument);
    EXPECT_THROW(s.finalize(), pk::InvalidArgument);
}

TEST(ChunkedStream, RefusesAHeadTheModelLacksAndBadSettings) {
    const auto m = load("rnnt");
    EXPECT_THROW(pk::ChunkedStream(*m, settings(pk::DecoderChoice::Ctc)), pk::Unsupported);
    pk::StreamSettings s;
    s.chunk_sec = 0.01;
    EXPECT_THROW(pk::ChunkedStream(*m, s), pk::InvalidArgument);
}

TEST(ChunkedStream, AnEmptyStreamFinalizesToNothing) {
    const auto m = load("rnnt");
    pk::ChunkedStream s(*m, pk::StreamSettings{});
    const pk::StreamUpdate u = s.finalize();
    EXPECT_TRUE(u.text.empty());
    EXPECT_TRUE(u.finalized);
    EXPECT_EQ(u.chunks, 0);
    EXPECT_TRUE(s.transcript().tokens.empty());
}

}  // namespace
