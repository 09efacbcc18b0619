// The sound stream through the C ABI on the CED fixture: windows scored as the one-shot call
// scores them, segments and drained scores, option size versioning and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "capi_handles.h"
#include "ced_fixtures.h"
#include "parakeet_capi.h"

namespace {

using capi_handles::Ctx;
using capi_handles::take;

// The score of `cls` for samples [0, n) of pcm, by the one-shot call.
float one_shot_score(parakeet_ctx* c, const std::vector<float>& pcm, int n, int cls) {
    const std::string json = take(parakeet_capi_sound_classify_pcm_json(c, pcm.data(), n, 16000, 0));
    const std::string key = "{\"index\":" + std::to_string(cls) + ",";
    const size_t at = json.find(key);
    EXPECT_NE(at, std::string::npos) << json;
    return std::stof(json.substr(json.find("\"score\":", at) + 8));
}

TEST(CapiSoundStream, SegmentsAndScoresFollowTheWindows) {
    Ctx c(ced_fixtures::model_path());
    ASSERT_NE(c.p, nullptr) << parakeet_capi_load_error();
    const std::vector<float> pcm = ced_fixtures::samples("long");  // 2.5 s: windows 0-1, 0-2, tail 0-2.5
    parakeet_sound_stream* s = parakeet_capi_sound_stream_begin(c.p, nullptr);
    ASSERT_NE(s, nullptr) << parakeet_capi_last_error(c.p);
    parakeet_sound_segment* segs = nullptr;
    int n = -1;
    ASSERT_EQ(parakeet_capi_sound_stream_feed(s, pcm.data(), 20000, 0, &segs, &n), 0);
    EXPECT_EQ(n, 0);
    EXPECT_EQ(segs, nullptr);
    ASSERT_EQ(parakeet_capi_sound_stream_active(s, &segs, &n), 0);
    // Class 9 scores about 0.96 in every window of this clip: open since 0.
    const float w1 = one_shot_score(c.p, pcm, 16000, 9), w2 = one_shot_score(c.p, pcm, 32000, 9),
                tail = one_shot_score(c.p, pcm, 40000, 9);
    ASSERT_GT(std::min({w1, w2, tail}), 0.4f);
    int open9 = -1;
    for (int i = 0; i < n; ++i)
        if (segs[i].class_index == 9) open9 = i;
    ASSERT_GE(open9, 0);
    EXPECT_FLOAT_EQ(segs[open9].start, 0.f);
    EXPECT_FLOAT_EQ(segs[open9].peak, std::max(w1, w2));
    parakeet_capi_free_sound_segments(segs);

    ASSERT_EQ(parakeet_capi_sound_stream_feed(s, pcm.data() + 20000, 20000, 1, &segs, &n), 0);
    int closed9 = -1;
    for (int i = 0; i < n; ++i)
        if (segs[i].class_index == 9) closed9 = i;
    ASSERT_GE(closed9, 0);
    EXPECT_STREQ(segs[closed9].label, "Silence");
    EXPECT_FLOAT_EQ(segs[closed9].start, 0.f);
    EXPECT_FLOAT_EQ(segs[closed9].end, 2.5f);
    EXPECT_FLOAT_EQ(segs[closed9].peak, std::max({w1, w2, tail}));
    parakeet_capi_free_sound_segments(segs);

    const std::string drained = take(parakeet_capi_sound_stream_drain_scores_json(s));
    EXPECT_EQ(drained.rfind("[{\"start\":0.000,\"end\":1.000,\"tags\":[{\"index\":9,\"label\":\"Silence\",\"score\":", 0),
              0u)
        << drained;
    EXPECT_NE(drained.find("{\"start\":0.000,\"end\":2.500,"), std::string::npos) << drained;
    EXPECT_EQ(std::count(drained.begin(), drained.end(), '{'), 3 * (1 + 5)) << drained;  // 3 windows, top 5
    EXPECT_EQ(take(parakeet_capi_sound_stream_drain_scores_json(s)), "[]");

    EXPECT_EQ(parakeet_capi_sound_stream_feed(s, pcm.data(), 10, 0, &segs, &n), 1);
    EXPECT_STREQ(parakeet_capi_last_error(c.p), "stream already finished");
    parakeet_capi_sound_stream_free(s);
}

TEST(CapiSoundStream, OptionsAreReadByTheirSize) {
    Ctx c(ced_fixtures::model_path());
    ASSERT_NE(c.p, nullptr) << parakeet_capi_load_error();
    parakeet_sound_opts o;
    parakeet_capi_sound_opts_default(&o);
    EXPECT_EQ(o.size, static_cast<int>(sizeof o));
    EXPECT_FLOAT_EQ(o.window_sec, 3.f);
    EXPECT_FLOAT_EQ(o.hop_sec, 1.f);
    EXPECT_FLOAT_EQ(o.on_threshold, 0.4f);
    EXPECT_FLOAT_EQ(o.off_threshold, 0.3f);
    EXPECT_FLOAT_EQ(o.min_duration_sec, 0.3f);
    EXPECT_EQ(o.top_k, 5);
    o.top_k = 11;  // more than the 10 classes
    EXPECT_EQ(parakeet_capi_sound_stream_begin(c.p, &o), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(c.p),
                 "invalid sound options: top_k must be between 0 and the number of classes");
    // A caller whose struct ends before top_k: its top_k is not read.
    o.size = static_cast<int>(offsetof(parakeet_sound_opts, top_k));
    parakeet_sound_stream* s = parakeet_capi_sound_stream_begin(c.p, &o);
    EXPECT_NE(s, nullptr) << parakeet_capi_last_error(c.p);
    parakeet_capi_sound_stream_free(s);
    o.hop_sec = 0.1f;
    EXPECT_EQ(parakeet_capi_sound_stream_begin(c.p, &o), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(c.p), "invalid sound options: hop_sec must be at least 0.2");
}

TEST(CapiSoundStream, BadCallsAreRefused) {
    Ctx c(ced_fixtures::model_path());
    Ctx asr(nemo_fixtures::data_dir() + "/nemo/ctc/model.gguf");
    ASSERT_NE(c.p, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_sound_stream_begin(asr.p, nullptr), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_UNSUPPORTED);
    parakeet_sound_stream* s = parakeet_capi_sound_stream_begin(c.p, nullptr);
    ASSERT_NE(s, nullptr);
    parakeet_sound_segment* segs = nullptr;
    int n = 0;
    const float x[4] = {0, 0, 0, 0};
    EXPECT_EQ(parakeet_capi_sound_stream_feed(nullptr, x, 4, 0, &segs, &n), 1);
    EXPECT_EQ(parakeet_capi_sound_stream_feed(s, x, 4, 0, nullptr, &n), 1);
    EXPECT_EQ(parakeet_capi_sound_stream_feed(s, x, 4, 0, &segs, nullptr), 1);
    EXPECT_EQ(parakeet_capi_sound_stream_active(nullptr, &segs, &n), 1);
    EXPECT_EQ(parakeet_capi_sound_stream_feed(s, nullptr, 4, 0, &segs, &n), 1);
    EXPECT_STREQ(parakeet_capi_last_error(c.p), "invalid samples buffer");
    EXPECT_EQ(parakeet_capi_sound_stream_feed(s, x, -1, 0, &segs, &n), 1);
    EXPECT_STREQ(parakeet_capi_last_error(c.p), "invalid samples buffer");
    EXPECT_EQ(parakeet_capi_sound_stream_drain_scores_json(nullptr), nullptr);
    parakeet_capi_sound_stream_free(s);
    parakeet_capi_sound_stream_free(nullptr);
    parakeet_capi_free_sound_segments(nullptr);
    parakeet_capi_sound_opts_default(nullptr);
}

}  // namespace
