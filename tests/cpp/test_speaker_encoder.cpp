// The speaker encoder against SpeechBrain on the committed fixtures (speaker_fixtures.h): the
// Kaldi fbank features to 1e-4 of torchaudio's, the ECAPA-TDNN embedding to cosine 0.9999 and
// 1e-4 per value, at every ISA level; bitwise-equal results for any thread count within a
// level; the fingerprints; and clear errors for unusable audio and files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/errors.h"
#include "common/sha256.h"
#include "gguf/mapped_file.h"
#include "isa_levels.h"
#include "model/speaker/speaker_encoder.h"
#include "speaker_fixtures.h"

namespace {

using pk::speaker::SpeakerEncoder;

std::unique_ptr<SpeakerEncoder> load_at(pk::IsaLevel level, int threads) {
    pk::LoadOptions o = isa_test::load_options_at(level);
    o.threads = threads;
    return SpeakerEncoder::load(speaker_fixtures::model_path(), o);
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
    return m;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
    return ab / std::sqrt(aa * bb);
}

class SpeakerEncoderParity : public isa_test::LevelTest {};

TEST_P(SpeakerEncoderParity, FeaturesAndEmbeddingsMatchSpeechBrain) {
    const auto enc = load_at(level(), 2);
    for (const std::string& clip : speaker_fixtures::clips()) {
        SCOPED_TRACE(clip);
        const auto ref = speaker_fixtures::load(clip);
        const std::vector<float> feats = enc->features(ref.pcm.data(), static_cast<int64_t>(ref.pcm.size()));
        ASSERT_EQ(feats.size(), ref.fbank.size());
        EXPECT_LE(max_abs_diff(feats, ref.fbank), 1e-4);
        const std::vector<float> emb = enc->embed(ref.pcm.data(), static_cast<int64_t>(ref.pcm.size()), 16000);
        ASSERT_EQ(emb.size(), ref.embedding.size());
        EXPECT_GE(cosine(emb, ref.embedding), 0.9999);
        EXPECT_LE(max_abs_diff(emb, ref.embedding), 1e-4);
    }
}

TEST_P(SpeakerEncoderParity, ThreadCountChangesNoBit) {
    const auto ref = speaker_fixtures::load("speech");
    const int64_t n = static_cast<int64_t>(ref.pcm.size());
    const std::vector<float> one = load_at(level(), 1)->embed(ref.pcm.data(), n, 16000);
    for (int threads : {2, 3}) {
        const std::vector<float> more = load_at(level(), threads)->embed(ref.pcm.data(), n, 16000);
        EXPECT_EQ(0, std::memcmp(one.data(), more.data(), one.size() * sizeof(float))) << threads << " threads";
    }
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
    EXPECT_GT(cosine(a, b), 0.95);
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
