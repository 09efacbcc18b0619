// The CAM++ speaker encoder against ModelScope's PyTorch modules on the committed fixtures
// (tools/fixtures/make_campplus_fixtures.py, docs/fixtures.md): a small CAM++ with seeded random
// weights through our converter, and clips long enough for two 100-frame context segments. The
// features to 1e-4 of torchaudio's, the embedding to cosine 0.9999 and 1e-4 per value at every
// ISA level; a q8_0 file (campplus_q8.gguf: its kernel-1 convolutions quantised) to cosine 0.999;
// bitwise-equal results for any thread count within a level, f32 and q8_0; the fingerprints; and
// too little audio refused clearly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/errors.h"
#include "common/sha256.h"
#include "gguf/mapped_file.h"
#include "isa_levels.h"
#include "model/speaker/speaker_encoder.h"
#include "speaker_checks.h"
#include "speaker_fixtures.h"

namespace {

using pk::speaker::SpeakerEncoder;

std::string model_path() { return speaker_fixtures::dir() + "/campplus_tiny.gguf"; }
std::string q8_path() { return speaker_fixtures::dir() + "/campplus_q8.gguf"; }
const std::vector<std::string> kClips = {"campplus_speech", "campplus_conversation"};

std::unique_ptr<SpeakerEncoder> load_at(pk::IsaLevel level, int threads) {
    return speaker_checks::load_at(model_path(), level, threads);
}

class CamPPlusParity : public isa_test::LevelTest {};

TEST_P(CamPPlusParity, FeaturesAndEmbeddingsMatchPyTorch) {
    speaker_checks::expect_matches_references(*load_at(level(), 2), kClips);
}

TEST_P(CamPPlusParity, ThreadCountChangesNoBit) {
    speaker_checks::expect_thread_count_changes_no_bit(model_path(), level(), "campplus_speech");
}

TEST_P(CamPPlusParity, Q8FileEmbedsCloseToPyTorch) {
    const auto ref = speaker_fixtures::load("campplus_q8_speech");
    const auto emb = speaker_checks::load_at(q8_path(), level(), 2)
                         ->embed(ref.pcm.data(), static_cast<int64_t>(ref.pcm.size()), 16000);
    ASSERT_EQ(emb.size(), ref.embedding.size());
    EXPECT_GE(speaker_checks::cosine(emb, ref.embedding), 0.999);
}

TEST_P(CamPPlusParity, Q8ThreadCountChangesNoBit) {
    speaker_checks::expect_thread_count_changes_no_bit(q8_path(), level(), "campplus_q8_speech");
}

INSTANTIATE_ISA_LEVELS(CamPPlusParity);

TEST(CamPPlusEncoder, Fingerprints) {
    const auto enc = load_at(isa_test::highest_level(), 1);
    EXPECT_EQ(enc->dim(), 192);
    EXPECT_EQ(enc->family(), "voicedetect:campplus:campplus_tiny:192");
    const pk::MappedFile file(model_path());
    EXPECT_EQ(enc->identity(), "sha256:" + pk::sha256_hex(file.data(), file.size()));
}

TEST(CamPPlusEncoder, TooLittleAudioIsRefusedClearly) {
    const auto enc = load_at(isa_test::highest_level(), 1);
    const std::vector<float> pcm(16000, 0.1f);
    EXPECT_THROW(enc->embed(pcm.data(), 0, 16000), pk::InvalidAudio);
    try {
        enc->embed(pcm.data(), 600, 16000);  // 2 frames: one after the stride-2 tdnn, no deviation
        FAIL() << "a 2-frame clip was embedded";
    } catch (const pk::InvalidAudio& e) {
        EXPECT_NE(std::string(e.what()).find("too little audio"), std::string::npos) << e.what();
    }
}

}  // namespace
