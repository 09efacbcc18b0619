// The 2-D speaker encoders against their PyTorch references on the committed fixtures
// (tools/fixtures/make_2d_speaker_fixtures.py): WeSpeaker's ResNet34 (resnet34_tiny.gguf) and
// 3D-Speaker's ERes2Net (eres2net_tiny.gguf) embed the clips of the ECAPA fixtures
// (speaker_fixtures.h) to cosine 0.9999 and 1e-4 per value of <model>_ref.gguf's embeddings, at
// every ISA level; any thread count gives the same bits within a level; the fingerprint
// families; too little audio is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/errors.h"
#include "isa_levels.h"
#include "model/speaker/speaker_encoder.h"
#include "speaker_checks.h"
#include "speaker_fixtures.h"

namespace {

using pk::speaker::SpeakerEncoder;

const std::vector<std::string>& models() {
    static const std::vector<std::string> m = {"resnet34", "eres2net"};
    return m;
}

std::string model_path(const std::string& model) { return speaker_fixtures::dir() + "/" + model + "_tiny.gguf"; }

std::unique_ptr<SpeakerEncoder> load_at(const std::string& model, pk::IsaLevel level, int threads) {
    return speaker_checks::load_at(model_path(model), level, threads);
}

std::vector<float> reference_embedding(const std::string& model, const std::string& clip) {
    const pk::GgufReader g = pk::GgufReader::open(speaker_fixtures::dir() + "/" + model + "_ref.gguf");
    return speaker_fixtures::floats(g, ("embedding." + clip).c_str());
}

class Speaker2dParity : public isa_test::LevelTest {};

TEST_P(Speaker2dParity, EmbeddingsMatchPyTorch) {
    for (const std::string& model : models()) {
        const auto enc = load_at(model, level(), 2);
        for (const std::string& clip : speaker_fixtures::clips()) {
            SCOPED_TRACE(model + " " + clip);
            const auto ref = speaker_fixtures::load(clip);
            const std::vector<float> want = reference_embedding(model, clip);
            const std::vector<float> got = enc->embed(ref.pcm.data(), static_cast<int64_t>(ref.pcm.size()), 16000);
            ASSERT_EQ(got.size(), want.size());
            EXPECT_GE(speaker_checks::cosine(got, want), 0.9999);
            EXPECT_LE(speaker_checks::max_abs_diff(got, want), 1e-4);
        }
    }
}

TEST_P(Speaker2dParity, ThreadCountChangesNoBit) {
    for (const std::string& model : models()) {
        SCOPED_TRACE(model);
        speaker_checks::expect_thread_count_changes_no_bit(model_path(model), level(), "conversation");
    }
}

INSTANTIATE_ISA_LEVELS(Speaker2dParity);

TEST(Speaker2d, FamiliesNameTheArchitecture) {
    EXPECT_EQ(load_at("resnet34", isa_test::highest_level(), 1)->family(),
              "voicedetect:wespeaker_resnet34:wespeaker_tiny:256");
    EXPECT_EQ(load_at("eres2net", isa_test::highest_level(), 1)->family(), "voicedetect:eres2net:eres2net_tiny:192");
}

TEST(Speaker2d, TooLittleAudioIsRefused) {
    // Three stride-2 stages leave ceil(T / 8) steps; the unbiased std needs two: T >= 9 frames,
    // 8 frames (0.095 s) is one short.
    std::vector<float> noise(400 + 8 * 160);
    for (size_t i = 0; i < noise.size(); ++i) noise[i] = 0.1f * std::sin(0.37f * static_cast<float>(i * i % 1013));
    for (const std::string& model : models()) {
        SCOPED_TRACE(model);
        const auto enc = load_at(model, isa_test::highest_level(), 1);
        try {
            enc->embed(noise.data(), 400 + 7 * 160, 16000);
            FAIL() << "an 8-frame clip was embedded";
        } catch (const pk::InvalidAudio& e) {
            EXPECT_NE(std::string(e.what()).find("at least 9 needed"), std::string::npos) << e.what();
        }
        EXPECT_EQ(enc->embed(noise.data(), static_cast<int64_t>(noise.size()), 16000).size(),
                  static_cast<size_t>(enc->dim()));  // 9 frames
    }
}

}  // namespace
