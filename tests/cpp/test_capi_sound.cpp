// The CED sound tagger through the C ABI: kind detection, classes and labels, one-shot
// classification against the PyTorch reference scores, and the wrong-kind and bad-input errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "capi_handles.h"
#include "ced_fixtures.h"
#include "model/sound/ced_model.h"
#include "parakeet_capi.h"

namespace {

using capi_handles::Ctx;
using capi_handles::take;

std::string asr_fixture() { return nemo_fixtures::data_dir() + "/nemo/ctc/model.gguf"; }

TEST(CapiSound, LoadsAsASoundTaggerWithItsLabels) {
    Ctx c(ced_fixtures::model_path());
    ASSERT_NE(c.p, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_model_kind(c.p), PARAKEET_MODEL_KIND_SOUND);
    EXPECT_EQ(parakeet_capi_num_classes(c.p), 10);
    EXPECT_STREQ(parakeet_capi_class_label(c.p, 0), "Speech");
    EXPECT_STREQ(parakeet_capi_class_label(c.p, 9), "Silence");
    EXPECT_EQ(parakeet_capi_class_label(c.p, 10), nullptr);
    EXPECT_EQ(parakeet_capi_class_label(c.p, -1), nullptr);
    EXPECT_EQ(parakeet_capi_num_classes(nullptr), -1);
    EXPECT_EQ(parakeet_capi_class_label(nullptr, 0), nullptr);
}

TEST(CapiSound, ClassifiesAClipAsTheReferenceDoes) {
    Ctx c(ced_fixtures::model_path());
    ASSERT_NE(c.p, nullptr) << parakeet_capi_load_error();
    const std::vector<float> pcm = ced_fixtures::samples("long");
    const std::vector<float> want = ced_fixtures::floats("clip_long.scores.f32");
    ASSERT_EQ(want.size(), 10u);
    const int best = static_cast<int>(std::max_element(want.begin(), want.end()) - want.begin());
    const std::string json =
        take(parakeet_capi_sound_classify_pcm_json(c.p, pcm.data(), static_cast<int>(pcm.size()), 16000, 2));
    ASSERT_FALSE(json.empty()) << parakeet_capi_last_error(c.p);
    const std::string head = "[{\"index\":" + std::to_string(best) + ",\"label\":\"" +
                             parakeet_capi_class_label(c.p, best) + "\",\"score\":";
    EXPECT_EQ(json.compare(0, head.size(), head), 0) << json;
    const float score = std::stof(json.substr(head.size()));
    EXPECT_NEAR(score, want[static_cast<size_t>(best)], 1e-4f) << json;
    EXPECT_EQ(std::count(json.begin(), json.end(), '{'), 2) << json;  // top_k = 2
    const std::string all =
        take(parakeet_capi_sound_classify_pcm_json(c.p, pcm.data(), static_cast<int>(pcm.size()), 16000, 0));
    EXPECT_EQ(std::count(all.begin(), all.end(), '{'), 10) << all;
}

TEST(CapiSound, ConcurrentCallsOnOneContextAgree) {
    Ctx c(ced_fixtures::model_path());
    ASSERT_NE(c.p, nullptr) << parakeet_capi_load_error();
    const std::vector<float> pcm = ced_fixtures::samples("long");
    const auto classify = [&] {
        return take(parakeet_capi_sound_classify_pcm_json(c.p, pcm.data(), static_cast<int>(pcm.size()), 16000, 0));
    };
    const std::string alone = classify();
    ASSERT_FALSE(alone.empty());
    std::vector<std::string> got(4);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < got.size(); ++i) threads.emplace_back([&, i] { got[i] = classify(); });
    for (std::thread& t : threads) t.join();
    for (const std::string& g : got) EXPECT_EQ(g, alone);
}

TEST(CapiSound, LoadOptionsChooseTheLevel) {
    // A context loaded at the scalar level scores bit for bit as the scalar model does.
    parakeet_ctx* c = parakeet_capi_load_with(ced_fixtures::model_path().c_str(), "{\"isa\": \"scalar\", \"threads\": 1}");
    ASSERT_NE(c, nullptr) << parakeet_capi_load_error();
    const std::vector<float> pcm = ced_fixtures::samples("long");
    const std::string json = take(parakeet_capi_sound_classify_pcm_json(c, pcm.data(), static_cast<int>(pcm.size()), 16000, 1));
    parakeet_capi_free(c);
    pk::LoadOptions scalar;
    scalar.isa = pk::IsaLevel::Scalar;
    const auto model = pk::CedModel::load(pk::GgufReader::open(ced_fixtures::model_path()), scalar);
    const std::vector<float> scores = model->classify(pcm.data(), static_cast<int64_t>(pcm.size()));
    const int best = static_cast<int>(std::max_element(scores.begin(), scores.end()) - scores.begin());
    // The JSON's shortest exact form reads back as the same float.
    EXPECT_EQ(std::stof(json.substr(json.find("\"score\":") + 8)), scores[static_cast<size_t>(best)]) << json;
    EXPECT_NE(json.find("\"index\":" + std::to_string(best) + ","), std::string::npos) << json;
}

TEST(CapiSound, RefusesBadInput) {
    Ctx c(ced_fixtures::model_path());
    ASSERT_NE(c.p, nullptr) << parakeet_capi_load_error();
    std::vector<float> pcm = ced_fixtures::samples("short");
    const int n = static_cast<int>(pcm.size());
    EXPECT_EQ(parakeet_capi_sound_classify_pcm_json(c.p, pcm.data(), n, 8000, 5), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(c.p), PARAKEET_ERROR_INVALID_AUDIO);
    EXPECT_EQ(parakeet_capi_sound_classify_pcm_json(c.p, nullptr, n, 16000, 5), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(c.p), "invalid samples buffer");
    EXPECT_EQ(parakeet_capi_sound_classify_pcm_json(c.p, pcm.data(), 100, 16000, 5), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(c.p), PARAKEET_ERROR_INVALID_ARGUMENT);
    pcm[7] = 0.f / 0.f;
    EXPECT_EQ(parakeet_capi_sound_classify_pcm_json(c.p, pcm.data(), n, 16000, 5), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(c.p), PARAKEET_ERROR_INVALID_AUDIO);
}

TEST(CapiSound, WrongKindsAreRefused) {
    Ctx sound(ced_fixtures::model_path());
    Ctx asr(asr_fixture());
    ASSERT_NE(sound.p, nullptr) << parakeet_capi_load_error();
    ASSERT_NE(asr.p, nullptr) << parakeet_capi_load_error();
    const std::vector<float> pcm = ced_fixtures::samples("short");
    const int n = static_cast<int>(pcm.size());
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json(sound.p, pcm.data(), n, 16000, 0), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(sound.p), PARAKEET_ERROR_UNSUPPORTED);
    EXPECT_STREQ(parakeet_capi_last_error(sound.p), "context holds a CED sound model; an ASR model is needed here");
    EXPECT_EQ(parakeet_capi_sound_classify_pcm_json(asr.p, pcm.data(), n, 16000, 5), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_UNSUPPORTED);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "context holds an ASR model; a CED sound model is needed here");
    EXPECT_EQ(parakeet_capi_num_classes(asr.p), -1);
    EXPECT_EQ(parakeet_capi_class_label(asr.p, 0), nullptr);
}

}  // namespace
