// The speaker encoder against SpeechBrain on the committed fixtures (speaker_fixtures.h): the
// Kaldi fbank features to 1e-4 of torchaudio's, the ECAPA-TDNN embedding to cosine 0.9999 and
// 1e-4 per value, at every ISA level; bitwise-equal results for any thread count within a
// level; the fingerprints; and clear errors for unusable audio and files.
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

std::unique_ptr<SpeakerEncoder> load_at(pk::IsaLevel level, int threads) {
    return speaker_checks::load_at(speaker_fixtures::model_path(), level, threads);
}

class SpeakerEncoderParity : public isa_test::LevelTest {};

TEST_P(SpeakerEncoderParity, FeaturesAndEmbeddingsMatchSpeechBrain) {
    speaker_checks::expect_matches_references(*load_at(level(), 2), speaker_fixtures::clips());
}

TEST_P(SpeakerEncoderParity, ThreadCountChangesNoBit) {
    speaker_checks::expect_thread_count_changes_no_bit(speaker_fixtures::model_path(), level(), "speech");
}

INSTANTIATE_ISA_LEVELS(SpeakerEncoderParity);

TEST(SpeakerEncoder, Fingerprints) {
    const auto enc = load_at(isa_test::highest_level(), 1);
    EXPECT_EQ(enc->dim(), 192);
    EXPECT_EQ(enc->family(), "voicedetect:ecapa_tdnn:spkrec_tiny:192");
    const pk::MappedFile file(speaker_fixtures::model_path());
    EXPECT_EQ(enc->identity(), "sha256:" + pk::sha256_hex(file.data(), file.size()));
}

TEST(SpeakerEncoder, OtherRatesAreResampled) {
    // The same clip at 48 kHz (each sample three times; the resampler's lowpass removes the
    // images) embeds close to the 16 kHz original.
    const auto enc = load_at(isa_test::highest_level(), 1);
    const auto ref = speaker_fixtures::load("speech");
    std::vector<float> up(ref.pcm.size() * 3);
    for (size_t i = 0; i < up.size(); ++i) up[i] = ref.pcm[i / 3];
    const auto a = enc->embed(ref.pcm.data(), static_cast<int64_t>(ref.pcm.size()), 16000);
    const auto b = enc->embed(up.data(), static_cast<int64_t>(up.size()), 48000);
    EXPECT_GT(speaker_checks::cosine(a, b), 0.95);
}

TEST(SpeakerEncoder, UnusableAudioIsRefusedClearly) {
    const auto enc = load_at(isa_test::highest_level(), 1);
    const std::vector<float> pcm(16000, 0.1f);
    EXPECT_THROW(enc->embed(pcm.data(), 0, 16000), pk::InvalidAudio);
    EXPECT_THROW(enc->embed(pcm.data(), 16000, 0), pk::InvalidAudio);
    try {
        enc->embed(pcm.data(), 800, 16000);  // 0.05 s: 3 frames
        FAIL() << "a 3-frame clip was embedded";
    } catch (const pk::InvalidAudio& e) {
        EXPECT_NE(std::string(e.what()).find("too little audio"), std::string::npos) << e.what();
    }
}

TEST(SpeakerEncoder, AnotherKindOfModelIsRefused) {
    const std::string asr = speaker_fixtures::dir() + "/../nemo/ctc/model.gguf";
    try {
        SpeakerEncoder::load(asr);
        FAIL() << "an ASR model loaded as a speaker model";
    } catch (const pk::ModelError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("not a speaker model"), std::string::npos) << what;
        EXPECT_NE(what.find("ASR"), std::string::npos) << what;
    }
}

}  // namespace
