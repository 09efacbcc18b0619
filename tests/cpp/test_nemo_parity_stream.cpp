// Parity of chunked streaming (pk::ChunkedStream) with NeMo 3.0.0's buffered chunked inference
// of offline models: for every tests/data/nemo/<model>/streamref_<clip>_<L>-<C>-<R>.gguf and
// head (made by tools/fixtures/make_nemo_fixtures.py --stream; docs/fixtures.md, "Chunked streaming"),
// our token ids, frames and TDT durations are exactly NeMo's, and so are the text and the words
// (confidences and word times within the offline bounds). The result is then the same bytes
// however the audio is cut into feeds (the whole clip, 1 s blocks, odd sizes, one sample at a
// time on the short clip), at 1 and 2 threads and through a pool of two backends (the 30 s
// clip: odd feeds through the pool only); and the updates the stream returns add up to its
// transcript. At every ISA level this CPU has.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "default_threads.h"
#include "isa_levels.h"
#include "model/model.h"
#include "model/stream/chunked_stream.h"
#include "nemo_fixtures.h"
#include "nemo_transcript_check.h"
#include "runtime/backend.h"

namespace {

struct Case {
    std::string model_dir, model_name, ref_path, clip, setting, head;
};

// streamref_<clip>_<setting>.gguf -> {clip, setting}; the clip name may hold '_', the setting not.
std::pair<std::string, std::string> clip_and_setting(const std::string& file) {
    const std::string stem = file.substr(std::string("streamref_").size(),
                                         file.size() - std::string("streamref_").size() - std::string(".gguf").size());
    const size_t cut = stem.rfind('_');
    return {stem.substr(0, cut), stem.substr(cut + 1)};
}

std::vector<Case> all_cases() {
    std::vector<Case> out;
    for (const auto& f : nemo_fixtures::all("streamref_")) {
        const pk::GgufReader ref = pk::GgufReader::open(f.ref_path);
        const auto [clip, setting] = clip_and_setting(f.ref_path.substr(f.model_dir.size() + 1));
        for (const char* head : {"tdt", "rnnt", "ctc"})
            if (ref.has_key(std::string("ref.") + head + ".ids"))
                out.push_back({f.model_dir, f.model_name, f.ref_path, clip, setting, head});
    }
    return out;
}

const std::vector<Case>& cases() {
    static const std::vector<Case> c = all_cases();
    return c;
}

const std::vector<float>& clip_samples(const pk::GgufReader& ref) {
    static std::map<std::string, std::vector<float>> cache;
    const std::string file = ref.get_string("ref.clip_file");
    auto& c = cache[file];
    if (c.empty()) c = pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/" + file, 0).samples;
    return c;
}

pk::StreamSettings settings_of(const pk::GgufReader& ref, const std::string& head) {
    const auto secs = ref.get_f32_array("ref.stream.secs");
    pk::StreamSettings s;
    s.left_sec = secs.at(0);
    s.chunk_sec = secs.at(1);
    s.right_sec = secs.at(2);
    s.decoder = head == "ctc" ? pk::DecoderChoice::Ctc : pk::DecoderChoice::Transducer;
    return s;
}

// Everything one streaming run gave: every update, then the stream's own final view.
struct StreamRun {
    std::vector<pk::StreamUpdate> updates;
    std::vector<pk::TranscriptToken> tokens;
    pk::Transcript transcript;
    pk::StreamContext context;
};

// Streams `samples` cut into feeds of sizes[0], sizes[1], ... (cycling), then finalizes.
StreamRun stream_clip(const pk::Model& model, const pk::StreamSettings& settings, const std::vector<float>& samples,
                const std::vector<int64_t>& sizes) {
    pk::ChunkedStream s(model, settings);
    StreamRun run;
    const int64_t n = static_cast<int64_t>(samples.size());
    for (int64_t at = 0, k = 0; at < n; ++k) {
        const int64_t len = std::min(sizes[static_cast<size_t>(k) % sizes.size()], n - at);
        run.updates.push_back(s.feed(samples.data() + at, len));
        at += len;
    }
    run.updates.push_back(s.finalize());
    run.tokens = s.tokens();
    run.transcript = s.transcript();
    run.context = s.context();
    return run;
}

// The chunk (index into ref.chunk.*) whose decoded frames hold global encoder frame `frame`.
int64_t chunk_of_frame(const pk::GgufReader& ref, int64_t frame) {
    const auto decoded = ref.get_i64_array("ref.chunk.decode_frames");
    int64_t end = 0;
    for (size_t i = 0; i < decoded.size(); ++i)
        if (frame < (end += decoded[i])) return static_cast<int64_t>(i);
    return static_cast<int64_t>(decoded.size());
}

// Fails on the first token whose id, frame or duration differs from NeMo's, naming the chunk
// (window) NeMo decoded it in and both sides' token, so a disagreement is located at once.
void expect_tokens_match(const std::vector<pk::TranscriptToken>& ours, const pk::GgufReader& ref,
                         const std::string& head) {
    const std::string p = "ref." + head + ".";
    const auto ids = ref.get_i64_array(p + "ids");
    const auto frames = ref.get_i64_array(p + "frames");
    const bool tdt = head == "tdt";
    const auto durations = tdt ? ref.get_i64_array(p + "durations") : std::vector<int64_t>(ids.size(), 0);
    const auto starts = ref.get_i64_array("ref.chunk.window_start");
    const auto ends = ref.get_i64_array("ref.chunk.window_end");
    const size_t n = std::min(ids.size(), ours.size());
    for (size_t i = 0; i < n; ++i) {
        const auto& k = ours[i];
        if (k.id == ids[i] && k.frame == frames[i] && (!tdt || k.duration == durations[i])) continue;
        const int64_t chunk = chunk_of_frame(ref, std::min<int64_t>(frames[i], k.frame));
        FAIL() << "first differing token " << i << " of " << ids.size() << " (NeMo) / " << ours.size()
               << " (ours): ours (id " << k.id << ", frame " << k.frame << ", duration " << k.duration
               << "), NeMo (id " << ids[i] << ", frame " << frames[i] << ", duration " << durations[i]
               << "); NeMo's chunk " << chunk << " window ["
               << (chunk < static_cast<int64_t>(starts.size()) ? starts[chunk] : -1) << ", "
               << (chunk < static_cast<int64_t>(ends.size()) ? ends[chunk] : -1) << ") samples";
    }
    ASSERT_EQ(ours.size(), ids.size()) << "token count differs from NeMo (the first " << n << " agree)";
}

// The updates add up to the stream's final result: their texts, words and tokens concatenated
// are the transcript's (the same bytes), tokens() is the transcript's tokens, and only the last
// update is final.
void expect_updates_add_up(const StreamRun& run) {
    pk::Transcript sum = run.transcript;
    sum.text.clear();
    sum.words.clear();
    sum.tokens.clear();
    for (size_t i = 0; i < run.updates.size(); ++i) {
        const auto& u = run.updates[i];
        sum.text += u.text;
        sum.words.insert(sum.words.end(), u.words.begin(), u.words.end());
        sum.tokens.insert(sum.tokens.end(), u.tokens.begin(), u.tokens.end());
        ASSERT_EQ(u.finalized, i + 1 == run.updates.size()) << "update " << i;
    }
    nemo_fixtures::expect_identical(sum, run.transcript);
    pk::Transcript from_tokens = run.transcript;
    from_tokens.tokens = run.tokens;
    nemo_fixtures::expect_identical(from_tokens, run.transcript);
}

using test_threads::with_default_threads;

void PrintTo(const Case& c, std::ostream* os) { *os << c.ref_path << " " << c.head; }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    std::string setting = info.param.setting;
    std::replace(setting.begin(), setting.end(), '-', '_');
    return info.param.model_name + "_" + info.param.clip + "_" + setting + "_" + info.param.head;
}

TEST(NemoParityStream, FixturesExist) {
    // 5 models x 3 clips x 4 settings, the hybrids with two heads
    EXPECT_EQ(cases().size(), 84u) << "streamref_*.gguf under " << nemo_fixtures::data_dir() << "/nemo";
}

class Stream : public ::testing::TestWithParam<Case> {};

TEST_P(Stream, MatchesNeMo) {
    const Case& c = GetParam();
    const pk::GgufReader ref = pk::GgufReader::open(c.ref_path);
    const std::vector<float>& samples = clip_samples(ref);
    ASSERT_EQ(static_cast<int64_t>(samples.size()), ref.get_i64("ref.n_samples"));
    const pk::StreamSettings settings = settings_of(ref, c.head);
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        pk::Model& model = nemo_fixtures::cached_model(c.model_dir, isa);

        const StreamRun whole = stream_clip(model, settings, samples, {static_cast<int64_t>(samples.size())});
        // NeMo's context sizes (seconds truncated to whole encoder frames) and its number of chunks
        const auto ctx = ref.get_i64_array("ref.stream.samples");
        EXPECT_EQ(whole.context.frame_samples, ref.get_i64("ref.stream.frame_samples"));
        EXPECT_EQ(whole.context.left, ctx.at(0));
        EXPECT_EQ(whole.context.chunk, ctx.at(1));
        EXPECT_EQ(whole.context.right, ctx.at(2));
        EXPECT_EQ(whole.updates.back().chunks,
                  static_cast<int64_t>(ref.get_i64_array("ref.chunk.window_start").size()));

        expect_tokens_match(whole.tokens, ref, c.head);
        if (HasFatalFailure()) return;
        // text, confidences, words and word times as NeMo's offline parity checks them
        nemo_fixtures::expect_transcript_matches(whole.transcript, ref, c.head);
        expect_updates_add_up(whole);
        if (HasFatalFailure()) return;

        // The same bytes through a pool of two 1-thread backends, fed odd sizes.
        {
            SCOPED_TRACE("pool of 2 x 1 thread, feeds of 1, 333, 4799");
            ASSERT_EQ(model.set_concurrency(2, 1), 2);
            const StreamRun r = stream_clip(model, settings, samples, {1, 333, 4799});
            model.set_concurrency(1, 0);
            nemo_fixtures::expect_identical(r.transcript, whole.transcript);
            expect_updates_add_up(r);
        }
        // The 30 s clip stops here (its seven streams would dominate the test's time); the others
        // are cut into feeds every other way, one sample at a time on the short clip, and run at 1
        // and 2 threads on the default backend.
        if (samples.size() > 10 * 16000) return;
        std::vector<std::vector<int64_t>> feeds = {{16000}, {4799}, {333}};
        if (samples.size() <= 16000) feeds.push_back({1});
        for (const auto& sizes : feeds) {
            SCOPED_TRACE("feeds of " + std::to_string(sizes[0]));
            const StreamRun r = stream_clip(model, settings, samples, sizes);
            nemo_fixtures::expect_identical(r.transcript, whole.transcript);
            expect_updates_add_up(r);
        }
        for (int threads : {1, 2}) {
            SCOPED_TRACE(std::to_string(threads) + " threads");
            with_default_threads(threads, [&] {
                nemo_fixtures::expect_identical(stream_clip(model, settings, samples, {4799}).transcript,
                                                whole.transcript);
            });
        }
    });
}

INSTANTIATE_TEST_SUITE_P(NemoParityStream, Stream, ::testing::ValuesIn(cases()), case_name);

}  // namespace
