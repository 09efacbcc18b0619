// Parity with NeMo 3.0.0 on the cache-aware streaming fixtures: for every
// tests/data/nemo/<model>/cawref_<clip>_<head>_<L>-<R>.gguf (tools/fixtures/make_cacheaware_fixtures.py;
// docs/fixtures.md, "Cache-aware streaming"):
//   * offline: Model::transcribe with the model's default context gives NeMo's transcribe()
//     token ids and text (the chunked_limited mask, causal subsampling and convolutions; a
//     prompt model's locale as target_lang);
//   * streaming: pk::CacheAwareStream under the file's context gives the token ids and text of
//     NeMo's cache-aware pipeline (CacheAwareStreamingAudioBuffer + conformer_stream_step) and
//     runs as many chunks, and the same bytes whether the audio arrives whole, in 1 s or 0.1 s
//     feeds or one sample at a time, at 1 and 2 threads; the updates add up to the transcript.
// The encoder outputs stored for the speech clip locate a disagreement (offline or streamed).
// At every ISA level this CPU has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "default_threads.h"
#include "isa_levels.h"
#include "model/model.h"
#include "model/stream/cache_aware_stream.h"
#include "nemo_fixtures.h"
#include "runtime/backend.h"

namespace {

struct Case {
    std::string model_dir, model_name, ref_path, clip, head;
    pk::AttContext context;
    std::string language;  // a prompt model's target_lang ("" for the others)
};

std::vector<Case> all_cases() {
    std::vector<Case> out;
    for (const auto& f : nemo_fixtures::all("cawref_")) {
        const pk::GgufReader ref = pk::GgufReader::open(f.ref_path);
        const auto ctx = ref.get_i64_array("ref.att_context");
        out.push_back({f.model_dir, f.model_name, f.ref_path, ref.get_string("ref.clip"), ref.get_string("ref.head"),
                       {static_cast<int>(ctx.at(0)), static_cast<int>(ctx.at(1))},
                       ref.has_key("ref.language") ? ref.get_string("ref.language") : ""});
    }
    return out;
}

const std::vector<Case>& cases() {
    static const std::vector<Case> c = all_cases();
    return c;
}

pk::DecoderChoice decoder_of(const std::string& head) {
    return head == "ctc" ? pk::DecoderChoice::Ctc : pk::DecoderChoice::Transducer;
}

std::vector<int64_t> ids_of(const std::vector<pk::TranscriptToken>& tokens) {
    std::vector<int64_t> out;
    for (const auto& t : tokens) out.push_back(t.id);
    return out;
}

struct StreamRun {
    std::vector<pk::StreamUpdate> updates;
    pk::Transcript transcript;
    int64_t steps = 0;
    std::vector<pk::StreamEvent> events;  // every update's
};

bool is_event_piece(const std::string& piece) { return piece == "<EOU>" || piece == "<EOB>"; }

// What the stream reports of NeMo's streamed tokens: the ids without <EOU>/<EOB>, which are
// events instead, with their frames.
struct ExpectedStream {
    std::vector<int64_t> ids;
    std::vector<std::pair<int64_t, int64_t>> events;  // (token, frame)
};

ExpectedStream expected_stream(const pk::Model& model, const pk::GgufReader& ref) {
    ExpectedStream e;
    const auto ids = ref.get_i64_array("ref.stream.ids");
    const auto frames = ref.get_i64_array("ref.stream.frames");
    for (size_t i = 0; i < ids.size(); ++i) {
        if (is_event_piece(model.config().pieces.at(static_cast<size_t>(ids[i])))) {
            e.events.emplace_back(ids[i], i < frames.size() ? frames[i] : -1);
        } else {
            e.ids.push_back(ids[i]);
        }
    }
    return e;
}

// NeMo's text prints <EOU>/<EOB> literally; a stream's text has them taken out (spaces that
// then touch are one).
std::string without_event_pieces(std::string text) {
    bool removed = false;
    for (const char* piece : {"<EOU>", "<EOB>"})
        for (size_t at; (at = text.find(piece)) != std::string::npos; removed = true)
            text.erase(at, std::string(piece).size());
    if (!removed) return text;  // NeMo's text as it is (runs of spaces included)
    std::string out;
    for (char ch : text)
        if (!(ch == ' ' && (out.empty() || out.back() == ' '))) out += ch;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

std::vector<std::pair<int64_t, int64_t>> event_pairs(const StreamRun& r) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const auto& e : r.events) out.emplace_back(e.token, e.frame);
    return out;
}

StreamRun stream_clip(const pk::Model& model, const Case& c, const std::vector<float>& samples, int64_t feed) {
    pk::CacheAwareStream s(model, c.context, decoder_of(c.head), c.language);
    StreamRun run;
    const int64_t n = static_cast<int64_t>(samples.size());
    for (int64_t at = 0; at < n; at += feed) run.updates.push_back(s.feed(samples.data() + at, std::min(feed, n - at)));
    run.updates.push_back(s.finalize());
    for (const auto& u : run.updates) run.events.insert(run.events.end(), u.events.begin(), u.events.end());
    run.transcript = s.transcript();
    run.steps = s.steps();
    return run;
}

float max_abs_diff(const float* a, const std::vector<float>& b) {
    float m = 0.0f;
    for (size_t i = 0; i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

std::string joined_text(const StreamRun& run) {
    std::string t;
    for (const auto& u : run.updates) t += u.text;
    return t;
}

using test_threads::with_default_threads;

void PrintTo(const Case& c, std::ostream* os) { *os << c.ref_path; }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    std::string lang = info.param.language;
    std::replace(lang.begin(), lang.end(), '-', '_');
    return info.param.model_name + "_" + info.param.clip + "_" + info.param.head + "_" +
           std::to_string(info.param.context.left) + "_" + std::to_string(info.param.context.right) +
           (lang.empty() ? "" : "_" + lang);
}

TEST(NemoParityCacheAware, FixturesExist) {
    // ca_rnnt_multi: 3 clips x 3 contexts; ca_hybrid: 3 clips x 2 heads; ca_eou, ca_tdt: 3 clips;
    // ca_prompt: 3 clips x 2 heads x 4 locales
    EXPECT_EQ(cases().size(), 45u) << "cawref_*.gguf under " << nemo_fixtures::data_dir() << "/nemo";
}

class CacheAware : public ::testing::TestWithParam<Case> {};

TEST_P(CacheAware, OfflineMatchesNeMoTranscribe) {
    const Case& c = GetParam();
    const pk::GgufReader ref = pk::GgufReader::open(c.ref_path);
    const std::vector<float> samples = nemo_fixtures::clip_samples(ref);
    ASSERT_EQ(static_cast<int64_t>(samples.size()), ref.get_i64("ref.n_samples"));
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        pk::Model& model = nemo_fixtures::cached_model(c.model_dir, isa);
        const pk::AttContext& def = model.config().enc.att_contexts.at(0);
        pk::RequestOptions o;
        o.decoder = decoder_of(c.head);
        o.language = c.language;
        if (!(def == c.context)) o.attention = pk::AttentionSetting::chunked(c.context.left, c.context.right);
        const pk::Transcript t = model.transcribe(samples.data(), static_cast<int64_t>(samples.size()), 16000, o);
        EXPECT_EQ(t.attention.describe(), "chunked[" + std::to_string(c.context.left) + "," +
                                              std::to_string(c.context.right) + "]");
        if (ref.get_bool("ref.has_enc")) {
            pk::Backend& b = pk::default_backend();
            std::lock_guard<std::mutex> lock(b.mutex());
            b.arena().reset();
            const pk::MelFeatures mel = model.compute_mel(b, samples.data(), static_cast<int64_t>(samples.size()));
            const pk::EncoderOutput enc = model.encode(b, mel, {}, o.attention);
            const std::vector<float> want = nemo_fixtures::tensor(ref, "offline_enc");
            ASSERT_EQ(enc.frames * model.config().enc.d_model, static_cast<int64_t>(want.size()));
            EXPECT_LT(max_abs_diff(enc.data, want), 2e-3f) << "offline encoder";
        }
        EXPECT_EQ(ids_of(t.tokens), ref.get_i64_array("ref.offline.ids"));
        EXPECT_EQ(t.text, ref.get_string("ref.offline.text"));
    });
}

TEST_P(CacheAware, StreamMatchesNeMoCacheAwarePipeline) {
    const Case& c = GetParam();
    const pk::GgufReader ref = pk::GgufReader::open(c.ref_path);
    const std::vector<float> samples = nemo_fixtures::clip_samples(ref);
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        pk::Model& model = nemo_fixtures::cached_model(c.model_dir, isa);
        const StreamRun whole = stream_clip(model, c, samples, static_cast<int64_t>(samples.size()) + 1);
        EXPECT_EQ(whole.steps, ref.get_i64("ref.stream.steps"));
        const ExpectedStream want = expected_stream(model, ref);
        EXPECT_EQ(ids_of(whole.transcript.tokens), want.ids);
        EXPECT_EQ(event_pairs(whole), want.events) << "<EOU>/<EOB> events (token, encoder frame)";
        EXPECT_EQ(whole.transcript.text, without_event_pieces(ref.get_string("ref.stream.text")));
        EXPECT_EQ(joined_text(whole), whole.transcript.text) << "the updates' texts add up to the transcript";
        // Feeds of 1 s, 0.1 s and (the short clips) single samples, at 1 and 2 threads: the same bytes.
        std::vector<int64_t> feeds = {16000, 1600};
        if (samples.size() <= 16000) feeds.push_back(1);
        for (int threads : {1, 2}) {
            with_default_threads(threads, [&] {
                for (int64_t feed : feeds) {
                    const StreamRun r = stream_clip(model, c, samples, feed);
                    EXPECT_EQ(r.transcript.text, whole.transcript.text) << "feed " << feed << ", " << threads << " threads";
                    EXPECT_EQ(ids_of(r.transcript.tokens), ids_of(whole.transcript.tokens)) << "feed " << feed;
                    EXPECT_EQ(joined_text(r), whole.transcript.text) << "feed " << feed;
                    EXPECT_EQ(r.steps, whole.steps) << "feed " << feed;
                    EXPECT_EQ(event_pairs(r), event_pairs(whole)) << "feed " << feed;
                }
            });
        }
    });
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CacheAware, ::testing::ValuesIn(cases()), case_name);

// Several streams at once, each from its own thread in 0.1 s feeds, on a pool of two backends
// with one thread each: every stream still gives NeMo's result for its context (streams hold
// no backend between feeds, so three streams share two backends).
TEST(NemoParityCacheAwarePool, StreamsOnAPoolGiveNeMosResults) {
    std::vector<Case> speech;
    std::vector<pk::Model*> models;  // loaded here: cached_model is for the main thread
    for (const Case& c : cases()) {
        if (c.clip != "speech") continue;
        speech.push_back(c);
        models.push_back(&nemo_fixtures::cached_model(c.model_dir, isa_test::highest_level()));
        ASSERT_EQ(models.back()->set_concurrency(2, 1), 2);
    }
    ASSERT_EQ(speech.size(), 15u);
    std::vector<std::string> texts(speech.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < speech.size(); ++i) {
        threads.emplace_back([&, i] {
            const pk::GgufReader ref = pk::GgufReader::open(speech[i].ref_path);
            texts[i] = stream_clip(*models[i], speech[i], nemo_fixtures::clip_samples(ref), 1600).transcript.text;
        });
    }
    for (auto& t : threads) t.join();
    for (size_t i = 0; i < speech.size(); ++i) {
        const pk::GgufReader ref = pk::GgufReader::open(speech[i].ref_path);
        EXPECT_EQ(texts[i], without_event_pieces(ref.get_string("ref.stream.text"))) << speech[i].ref_path;
    }
    for (pk::Model* m : models) m->set_concurrency(1, 0);
}

}  // namespace
