// The pieces of the diarization stream that need no model: the chunk windows against NeMo's
// streaming_feat_loader (tests/data/diar_cache/schedule.gguf), the incremental segments against
// NeMo's diarize() segments of the Sortformer fixtures (same probabilities, fed whole and in
// pieces), and the latency presets.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "common/errors.h"
#include "gguf/gguf_reader.h"
#include "model/diar/latency_presets.h"
#include "model/diar/segment_tracker.h"
#include "model/diar/stream_schedule.h"
#include "nemo_fixtures.h"

namespace {

TEST(DiarStreamSchedule, MatchesNemoFeatLoader) {
    const pk::GgufReader ref = pk::GgufReader::open(nemo_fixtures::data_dir() + "/diar_cache/schedule.gguf");
    const int n = ref.get_i32("n_cases");
    ASSERT_GT(n, 50);
    for (int c = 0; c < n; ++c) {
        const std::string p = "case" + std::to_string(c) + ".";
        pk::DiarStreamingParams sp;
        sp.chunk_len = ref.get_i32(p + "chunk_len");
        sp.chunk_left_context = ref.get_i32(p + "chunk_left_context");
        sp.chunk_right_context = ref.get_i32(p + "chunk_right_context");
        const int64_t feat_len = ref.get_i32(p + "feat_len");
        SCOPED_TRACE(p + " feat_len " + std::to_string(feat_len));
        const std::vector<int64_t> begin = ref.get_i64_array(p + "begin"), end = ref.get_i64_array(p + "end");
        const std::vector<int64_t> cb = ref.get_i64_array(p + "chunk_begin"), ce = ref.get_i64_array(p + "chunk_end");
        const std::vector<int64_t> lc = ref.get_i64_array(p + "lc"), rc = ref.get_i64_array(p + "rc");
        ASSERT_EQ(pk::diar_chunk_count(sp, 8, feat_len), static_cast<int64_t>(begin.size()));
        for (size_t i = 0; i < begin.size(); ++i) {
            const pk::DiarChunkWindow w = pk::diar_chunk_window(sp, 8, static_cast<int64_t>(i), feat_len);
            EXPECT_EQ(w.begin, begin[i]) << i;
            EXPECT_EQ(w.end, end[i]) << i;
            EXPECT_EQ(w.chunk_begin, cb[i]) << i;
            EXPECT_EQ(w.chunk_end, ce[i]) << i;
            EXPECT_EQ(w.lc, lc[i]) << i;
            EXPECT_EQ(w.rc, rc[i]) << i;
            // A window a live stream may run before the end is the one the whole clip gives.
            if (pk::diar_full_window_end(sp, 8, static_cast<int64_t>(i)) <= feat_len) EXPECT_EQ(w.end,
                pk::diar_full_window_end(sp, 8, static_cast<int64_t>(i)));
        }
    }
}

struct NemoSegments {
    std::vector<float> probs;
    std::vector<int64_t> speaker;
    std::vector<float> start, end;
};

NemoSegments nemo_segments(const std::string& model) {
    const pk::GgufReader ref =
        pk::GgufReader::open(nemo_fixtures::data_dir() + "/nemo/" + model + "/diarref_conversation.gguf");
    return {nemo_fixtures::tensor(ref, "probs"), ref.get_i64_array("seg.speaker"), ref.get_f32_array("seg.start"),
            ref.get_f32_array("seg.end")};
}

// NeMo lists a speaker's segments together, speakers in order; the tracker hands them out by
// start. Both as (speaker, start, end) sorted by speaker then start.
std::vector<std::tuple<int, float, float>> by_speaker(const std::vector<pk::DiarSegment>& s) {
    std::vector<std::tuple<int, float, float>> out;
    for (const auto& x : s) out.emplace_back(x.speaker, static_cast<float>(x.start), static_cast<float>(x.end));
    std::sort(out.begin(), out.end());
    return out;
}

TEST(DiarSegmentTracker, EqualsNemoDiarizeSegmentsFedWholeOrInPieces) {
    for (const std::string model : {"sortformer_offline", "sortformer_stream"}) {
        SCOPED_TRACE(model);
        const NemoSegments ref = nemo_segments(model);
        const int n_spk = 4;
        const int64_t T = static_cast<int64_t>(ref.probs.size()) / n_spk;
        std::vector<std::tuple<int, float, float>> want;
        for (size_t i = 0; i < ref.speaker.size(); ++i)
            want.emplace_back(static_cast<int>(ref.speaker[i]), ref.start[i], ref.end[i]);
        std::sort(want.begin(), want.end());
        ASSERT_GT(want.size(), 3u);
        for (int64_t piece : {T, int64_t{1}, int64_t{7}}) {
            SCOPED_TRACE("pieces of " + std::to_string(piece));
            pk::DiarSegmentTracker tracker(n_spk, 8, 0.5f, 0.5f);
            std::vector<pk::DiarSegment> got;
            for (int64_t f = 0; f < T; f += piece) {
                const size_t before = got.size();
                tracker.push(ref.probs.data() + f * n_spk, std::min(piece, T - f), got);
                for (size_t i = before; i < got.size(); ++i)  // closed segments end by now
                    EXPECT_LE(got[i].end, (f + std::min(piece, T - f)) * 0.08 + 1e-9);
                for (const auto& a : tracker.active()) EXPECT_NEAR(a.end, tracker.frames() * 0.08, 1e-9);
            }
            tracker.finish(got);
            EXPECT_TRUE(tracker.active().empty());
            EXPECT_EQ(by_speaker(got), want);
        }
    }
}

TEST(DiarSegmentTracker, ThresholdsAreStrictAndTheLastSegmentEndsAtTheLastUnit) {
    // p exactly at the threshold keeps the state; a segment open at the end closes 10 ms before
    // the end of the last frame.
    const float p[] = {0.4f, 0.6f, 0.5f, 0.49f, 0.5f, 0.51f, 0.7f};
    pk::DiarSegmentTracker t(1, 8, 0.5f, 0.5f);
    std::vector<pk::DiarSegment> got;
    t.push(p, 7, got);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_DOUBLE_EQ(got[0].start, 0.08);
    EXPECT_DOUBLE_EQ(got[0].end, 0.24);
    t.finish(got);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_DOUBLE_EQ(got[1].start, 0.40);
    EXPECT_DOUBLE_EQ(got[1].end, 0.55);
}

TEST(DiarLatencyPresets, NumberingAndValues) {
    pk::DiarStreamingParams model;
    model.chunk_len = 264;
    model.chunk_right_context = 0;
    model.spkcache_sil_frames_per_spk = 1;
    const pk::DiarStreamingParams m = pk::diar_latency_preset(0, model);
    EXPECT_EQ(m.chunk_len, 264);
    const int chunk[] = {6, 6, 3}, right[] = {7, 2, 1};
    const double latency[] = {1.04, 0.64, 0.32};
    for (int mode = 1; mode <= 3; ++mode) {
        const pk::DiarStreamingParams p = pk::diar_latency_preset(mode, model);
        EXPECT_EQ(p.chunk_len, chunk[mode - 1]);
        EXPECT_EQ(p.chunk_right_context, right[mode - 1]);
        EXPECT_NEAR((p.chunk_len + p.chunk_right_context) * 0.08, latency[mode - 1], 1e-12);
        EXPECT_EQ(p.fifo_len, 188);
        EXPECT_EQ(p.spkcache_len, 188);
        EXPECT_EQ(p.spkcache_update_period, 144);
        EXPECT_EQ(p.spkcache_sil_frames_per_spk, 1);  // the checkpoint's
        EXPECT_NO_THROW(p.check(8));
    }
    for (int bad : {-1, 4, 100}) {
        try {
            pk::diar_latency_preset(bad, model);
            ADD_FAILURE() << bad;
        } catch (const pk::InvalidArgument& e) {
            EXPECT_EQ(std::string(e.what()), "unknown diarization latency mode " + std::to_string(bad));
        }
    }
}

}  // namespace
