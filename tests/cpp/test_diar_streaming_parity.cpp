// Sortformer's streaming path against NeMo 3.0.0's forward_streaming (the streamref_*.gguf
// files of tests/data/nemo/sortformer_stream, made by tools/fixtures/make_sortformer_fixtures.py):
// per-frame probabilities within 1e-4 for every committed setting (the "tiny" one compresses
// the speaker cache within the clip), at every ISA level. Then the live DiarStream: the same
// segments for any cut of the audio into feeds, equal to the segments of the one-shot
// probabilities; results independent of the thread count (bitwise); a per_feature model refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "capi/diar_streaming_option.h"
#include "common/errors.h"
#include "gguf/gguf_reader.h"
#include "isa_levels.h"
#include "model/diar/diar_model.h"
#include "model/diar/diar_segments.h"
#include "model/diar/diar_stream.h"
#include "model/diar/diar_streaming.h"
#include "nemo_fixtures.h"

namespace {

std::string model_dir(const std::string& name) { return nemo_fixtures::data_dir() + "/nemo/" + name; }

std::vector<float> conversation() {
    return pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/conversation_16k.wav", 0).samples;
}

pk::DiarStreamingParams setting_of(const pk::GgufReader& ref, const pk::DiarModel& m) {
    pk::DiarStreamingParams p = m.config().streaming;
    p.chunk_len = ref.get_i32("stream.chunk_len");
    p.chunk_left_context = ref.get_i32("stream.chunk_left_context");
    p.chunk_right_context = ref.get_i32("stream.chunk_right_context");
    p.fifo_len = ref.get_i32("stream.fifo_len");
    p.spkcache_len = ref.get_i32("stream.spkcache_len");
    p.spkcache_update_period = ref.get_i32("stream.spkcache_update_period");
    return p;
}

TEST(DiarStreamingParity, ProbabilitiesMatchNemoForwardStreaming) {
    const std::vector<std::string> refs = nemo_fixtures::list(model_dir("sortformer_stream"), "streamref_", ".gguf");
    ASSERT_GE(refs.size(), 4u);
    const std::vector<float> audio = conversation();
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        const auto model = pk::DiarModel::load(model_dir("sortformer_stream") + "/model.gguf",
                                               isa_test::load_options_at(isa));
        for (const std::string& file : refs) {
            SCOPED_TRACE(file);
            const pk::GgufReader ref = pk::GgufReader::open(model_dir("sortformer_stream") + "/" + file);
            ASSERT_EQ(ref.get_i32("n_samples"), static_cast<int>(audio.size()));
            const std::vector<float> want = nemo_fixtures::tensor(ref, "probs");
            const pk::SpeakerProbabilities got = pk::diar_streaming_probabilities(
                *model, audio.data(), static_cast<int64_t>(audio.size()), 16000, setting_of(ref, *model));
            ASSERT_EQ(got.data.size(), want.size());
            float worst = 0.0f;
            int decided = 0;
            for (size_t i = 0; i < want.size(); ++i) {
                worst = std::max(worst, std::fabs(got.data[i] - want[i]));
                decided += (want[i] > 0.9f || want[i] < 0.1f);
            }
            EXPECT_LE(worst, 1e-4f);
            std::printf("%s at %s: max |p - p_nemo| = %.3g over %zu values\n", file.c_str(), pk::isa_level_name(isa),
                        worst, want.size());
            // Structured outputs, not all near 0.5: the comparison means something.
            EXPECT_GT(decided, static_cast<int>(want.size() / 3));
        }
    });
}

// Segments as the C ABI hands them out: floats (a time with 2 decimals is one float, while
// round(x*100)/100 and round(x/0.01)*0.01 may differ in a double's last bit).
std::vector<std::tuple<int, float, float>> stream_segments(const pk::DiarModel& m, const pk::DiarStreamingParams& p,
                                                             const std::vector<float>& audio, int64_t piece) {
    pk::DiarStream s(m, p);
    std::vector<std::tuple<int, float, float>> out;
    for (int64_t at = 0;; at += piece) {
        const int64_t n = std::min<int64_t>(piece, static_cast<int64_t>(audio.size()) - at);
        const bool last = at + n >= static_cast<int64_t>(audio.size());
        for (const pk::DiarSegment& seg : s.feed(audio.data() + at, n, last))
            out.emplace_back(seg.speaker, static_cast<float>(seg.start), static_cast<float>(seg.end));
        if (last) break;
    }
    EXPECT_TRUE(s.finished());
    std::sort(out.begin(), out.end());
    return out;
}

TEST(DiarStream, SegmentsDoNotDependOnTheFeedsAndEqualTheOneShotPath) {
    const auto model = pk::DiarModel::load(model_dir("sortformer_stream") + "/model.gguf");
    const std::vector<float> audio = conversation();
    const pk::GgufReader ref =
        pk::GgufReader::open(model_dir("sortformer_stream") + "/streamref_conversation_tiny.gguf");
    const pk::DiarStreamingParams p = setting_of(ref, *model);
    const pk::SpeakerProbabilities probs =
        pk::diar_streaming_probabilities(*model, audio.data(), static_cast<int64_t>(audio.size()), 16000, p);
    pk::DiarPostProcessing post;
    post.onset = model->config().onset;
    post.offset = model->config().offset;
    std::vector<std::tuple<int, float, float>> want;
    for (const pk::DiarSegment& s : pk::speaker_segments(probs.data.data(), probs.frames, probs.n_speakers,
                                                         model->config().upsample_factor, post))
        want.emplace_back(s.speaker, static_cast<float>(s.start), static_cast<float>(s.end));
    std::sort(want.begin(), want.end());
    ASSERT_GT(want.size(), 3u);
    for (int64_t piece : {int64_t{1600}, int64_t{8000}, int64_t{80000}, int64_t{777}, static_cast<int64_t>(audio.size())}) {
        SCOPED_TRACE("feeds of " + std::to_string(piece) + " samples");
        EXPECT_EQ(stream_segments(*model, p, audio, piece), want);
    }
}

TEST(DiarStream, ThreadCountDoesNotChangeTheProbabilities) {
    const std::vector<float> audio = conversation();
    std::vector<float> first;
    for (int threads : {1, 2, 3}) {
        pk::LoadOptions o;
        o.threads = threads;
        const auto model = pk::DiarModel::load(model_dir("sortformer_stream") + "/model.gguf", o);
        pk::DiarStreamingParams p = model->config().streaming;
        p.chunk_len = 6;
        p.chunk_right_context = 2;
        p.fifo_len = 10;
        p.spkcache_len = 16;
        p.spkcache_update_period = 8;
        const std::vector<float> got =
            pk::diar_streaming_probabilities(*model, audio.data(), static_cast<int64_t>(audio.size()), 16000, p).data;
        if (first.empty()) first = got;
        EXPECT_EQ(got, first) << threads << " threads";
    }
}

TEST(DiarStream, RefusesPerFeatureModelsAndBadInput) {
    const auto offline = pk::DiarModel::load(model_dir("sortformer_offline") + "/model.gguf");
    ASSERT_TRUE(offline->log_mel().config().normalize_per_feature);
    EXPECT_THROW(pk::DiarStream(*offline, offline->config().streaming), pk::Unsupported);

    const auto model = pk::DiarModel::load(model_dir("sortformer_stream") + "/model.gguf");
    pk::DiarStream s(*model, model->config().streaming);
    const float nan = std::nanf("");
    EXPECT_THROW(s.feed(&nan, 1, false), pk::InvalidAudio);
    EXPECT_THROW(s.feed(nullptr, 5, false), pk::InvalidArgument);
    EXPECT_THROW(s.feed(nullptr, -1, false), pk::InvalidArgument);
    EXPECT_TRUE(s.feed(nullptr, 0, true).empty());  // no audio: nothing diarized
    EXPECT_EQ(s.time(), 0.0);
    EXPECT_THROW(s.feed(nullptr, 0, false), pk::InvalidArgument);  // after the last feed
}

TEST(DiarStreamingOption, ReadsNemoNamesOverTheCheckpointsAndChecksThem) {
    const auto model = pk::DiarModel::load(model_dir("sortformer_stream") + "/model.gguf");
    const pk::GgufReader ref =
        pk::GgufReader::open(model_dir("sortformer_stream") + "/streamref_conversation_tiny.gguf");
    const auto parse = [&](const char* json) {
        pk::capi::JsonScanner in(json, "diarization options");
        return pk::capi::parse_diar_streaming_option(in, *model);
    };
    const pk::DiarStreamingParams want = setting_of(ref, *model);
    const std::string json = "{\"chunk_len\": " + std::to_string(want.chunk_len) + ", \"chunk_right_context\": " +
                             std::to_string(want.chunk_right_context) + ", \"chunk_left_context\": " +
                             std::to_string(want.chunk_left_context) + ", \"fifo_len\": " +
                             std::to_string(want.fifo_len) + ", \"spkcache_len\": " + std::to_string(want.spkcache_len) +
                             ", \"spkcache_update_period\": " + std::to_string(want.spkcache_update_period) + "}";
    const pk::DiarStreamingParams got = parse(json.c_str());
    EXPECT_EQ(got.chunk_len, want.chunk_len);
    EXPECT_EQ(got.chunk_right_context, want.chunk_right_context);
    EXPECT_EQ(got.chunk_left_context, want.chunk_left_context);
    EXPECT_EQ(got.fifo_len, want.fifo_len);
    EXPECT_EQ(got.spkcache_len, want.spkcache_len);
    EXPECT_EQ(got.spkcache_update_period, want.spkcache_update_period);
    // {} is the checkpoint's own configuration.
    EXPECT_EQ(parse("{}").chunk_len, model->config().streaming.chunk_len);
    EXPECT_EQ(parse("{ }").spkcache_len, model->config().streaming.spkcache_len);
    for (const char* bad : {"{\"chunk\": 6}", "{\"chunk_len\": 0}", "{\"chunk_len\": 2.5}", "{\"fifo_len\": -1}",
                            "{\"spkcache_len\": 15}", "[]", "{\"chunk_len\": 6"}) {
        EXPECT_THROW(parse(bad), pk::InvalidArgument) << bad;
    }
}

}  // namespace
