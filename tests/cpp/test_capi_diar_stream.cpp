// The diarization stream family through the C ABI, on the Sortformer streaming fixture: the
// same segments for feeds of 0.1 s, 0.5 s and 5 s at every latency preset; chunk_samples, time
// and active; unknown latency modes; a feed after is_last; bad buffers; the wrong model kinds;
// the same segments at any pool size and thread count; NULL handles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "audio/wav_reader.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

// A context on the fixture model of `family`, freed at scope exit.
struct Ctx {
    parakeet_ctx* p;
    explicit Ctx(const char* family)
        : p(parakeet_capi_load((nemo_fixtures::data_dir() + "/nemo/" + family + "/model.gguf").c_str())) {}
    Ctx(const Ctx&) = delete;
    Ctx& operator=(const Ctx&) = delete;
    ~Ctx() { parakeet_capi_free(p); }
};

using Segments = std::vector<std::tuple<int, float, float>>;

const std::vector<float>& conversation() {
    static const std::vector<float> a =
        pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/conversation_16k.wav", 0).samples;
    return a;
}

// Feeds the conversation in pieces of `piece` samples; checks what each call reports.
Segments run(parakeet_ctx* ctx, int latency, int piece) {
    parakeet_diar_stream* s = parakeet_capi_diarize_stream_begin_latency(ctx, latency);
    EXPECT_NE(s, nullptr) << parakeet_capi_last_error(ctx);
    if (s == nullptr) return {};
    const std::vector<float>& a = conversation();
    Segments out;
    float last_time = 0.0f;
    for (size_t at = 0; at < a.size(); at += piece) {
        const int n = static_cast<int>(std::min<size_t>(piece, a.size() - at));
        const int is_last = at + n >= a.size();
        parakeet_diar_segment* segs = nullptr;
        int n_segs = -1;
        EXPECT_EQ(parakeet_capi_diarize_stream_feed(s, a.data() + at, n, is_last, &segs, &n_segs), 0)
            << parakeet_capi_last_error(ctx);
        EXPECT_EQ(segs == nullptr, n_segs == 0);
        const float t = parakeet_capi_diarize_stream_time(s);
        EXPECT_GE(t, last_time);
        // The time diarized trails the audio by at most one chunk window, and never leads it.
        EXPECT_LE(t, static_cast<double>(at + n) / 16000.0 + 1e-4);
        if (!is_last)
            EXPECT_GE(t + 1e-4, (static_cast<double>(at + n) - parakeet_capi_diarize_stream_chunk_samples(s) - 2 * 1280) /
                                    16000.0);
        last_time = t;
        for (int i = 0; i < n_segs; ++i) {
            EXPECT_LE(segs[i].end, t + 1e-4f);
            EXPECT_LT(segs[i].start, segs[i].end);
            if (i > 0) EXPECT_LE(segs[i - 1].start, segs[i].start);
            out.emplace_back(segs[i].speaker, segs[i].start, segs[i].end);
        }
        parakeet_capi_free_diar_segments(segs);
        parakeet_diar_segment* act = nullptr;
        int n_act = -1;
        EXPECT_EQ(parakeet_capi_diarize_stream_active(s, &act, &n_act), 0);
        for (int i = 0; i < n_act; ++i) EXPECT_FLOAT_EQ(act[i].end, std::round(t * 100.0f) / 100.0f);
        if (is_last) EXPECT_EQ(n_act, 0);
        parakeet_capi_free_diar_segments(act);
    }
    // The whole clip diarized: ceil(mel frames / 8) frames of 80 ms.
    EXPECT_NEAR(parakeet_capi_diarize_stream_time(s), ((a.size() / 160 + 7) / 8) * 0.08f, 1e-4f);
    EXPECT_EQ(parakeet_capi_diarize_stream_feed(s, a.data(), 1, 0, nullptr, nullptr), 1);
    EXPECT_STREQ(parakeet_capi_last_error(ctx), "stream already finished");
    parakeet_capi_diarize_stream_free(s);
    std::sort(out.begin(), out.end());
    return out;
}

TEST(CapiDiarStream, SameSegmentsForAnyFeedSizeAtEveryPreset) {
    Ctx ctx("sortformer_stream");
    ASSERT_NE(ctx.p, nullptr) << parakeet_capi_thread_last_error();
    for (int latency = PARAKEET_DIAR_LATENCY_MODEL; latency <= PARAKEET_DIAR_LATENCY_ULTRA_LOW; ++latency) {
        SCOPED_TRACE("latency " + std::to_string(latency));
        const Segments tenth = run(ctx.p, latency, 1600);
        EXPECT_GT(tenth.size(), 3u);
        EXPECT_EQ(run(ctx.p, latency, 8000), tenth);
        EXPECT_EQ(run(ctx.p, latency, 80000), tenth);
    }
}

TEST(CapiDiarStream, ChunkSamplesFollowThePresets) {
    Ctx ctx("sortformer_stream");
    const int want[] = {-1, 13 * 1280, 8 * 1280, 4 * 1280};
    for (int latency = 1; latency <= 3; ++latency) {
        parakeet_diar_stream* s = parakeet_capi_diarize_stream_begin_latency(ctx.p, latency);
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(parakeet_capi_diarize_stream_chunk_samples(s), want[latency]);
        EXPECT_EQ(parakeet_capi_diarize_stream_time(s), 0.0f);
        parakeet_capi_diarize_stream_free(s);
    }
}

TEST(CapiDiarStream, ResultsDoNotDependOnPoolOrThreads) {
    Segments first;
    for (const auto& [backends, threads] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}, std::pair{3, 2}}) {
        Ctx ctx("sortformer_stream");
        ASSERT_GE(parakeet_capi_set_concurrency(ctx.p, backends, threads), 0) << parakeet_capi_last_error(ctx.p);
        const Segments got = run(ctx.p, PARAKEET_DIAR_LATENCY_VERY_LOW, 8000);
        if (first.empty()) first = got;
        EXPECT_EQ(got, first) << backends << " backends x " << threads << " threads";
    }
}

TEST(CapiDiarStream, Errors) {
    Ctx ctx("sortformer_stream");
    for (int bad : {-1, 4, 99}) {
        EXPECT_EQ(parakeet_capi_diarize_stream_begin_latency(ctx.p, bad), nullptr);
        EXPECT_EQ(std::string(parakeet_capi_last_error(ctx.p)), "unknown diarization latency mode " + std::to_string(bad));
        EXPECT_EQ(parakeet_capi_last_error_code(ctx.p), PARAKEET_ERROR_INVALID_ARGUMENT);
    }
    parakeet_diar_stream* s = parakeet_capi_diarize_stream_begin(ctx.p);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(parakeet_capi_diarize_stream_feed(s, nullptr, 10, 0, nullptr, nullptr), 1);
    EXPECT_STREQ(parakeet_capi_last_error(ctx.p), "invalid samples buffer");
    const float nan = std::nanf("");
    EXPECT_EQ(parakeet_capi_diarize_stream_feed(s, &nan, 1, 0, nullptr, nullptr), 1);
    EXPECT_EQ(parakeet_capi_last_error_code(ctx.p), PARAKEET_ERROR_INVALID_AUDIO);
    // Silence and a single sample: nothing to report, no error.
    const std::vector<float> quiet(16000 * 3, 0.0f);
    parakeet_diar_segment* segs = nullptr;
    int n = -1;
    EXPECT_EQ(parakeet_capi_diarize_stream_feed(s, quiet.data(), static_cast<int>(quiet.size()), 1, &segs, &n), 0);
    parakeet_capi_free_diar_segments(segs);
    parakeet_capi_diarize_stream_free(s);
    s = parakeet_capi_diarize_stream_begin(ctx.p);
    EXPECT_EQ(parakeet_capi_diarize_stream_feed(s, quiet.data(), 1, 1, &segs, &n), 0);
    EXPECT_EQ(n, 0);
    EXPECT_EQ(segs, nullptr);
    EXPECT_EQ(parakeet_capi_diarize_stream_time(s), 0.0f);
    parakeet_capi_diarize_stream_free(s);

    // A model normalising per_feature cannot stream live; an ASR context is another kind.
    Ctx offline("sortformer_offline");
    EXPECT_EQ(parakeet_capi_diarize_stream_begin(offline.p), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(offline.p), PARAKEET_ERROR_UNSUPPORTED);
    Ctx asr("ctc");
    EXPECT_EQ(parakeet_capi_diarize_stream_begin_latency(asr.p, 1), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_UNSUPPORTED);
}

}  // namespace
