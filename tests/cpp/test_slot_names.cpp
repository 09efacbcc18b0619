// Naming diarized slots (model/speaker/slot_names.h) with the fixture encoder on constructed
// segments over two committed clips end to end (speech 0-2 s, conversation 2-4 s): a speaker
// who becomes named, an impostor under the threshold, a slot with too little clean voice, and
// the profiles (intervals, durations, embeddings, reasons).
#include <gtest/gtest.h>

#include <vector>

#include "model/speaker/slot_names.h"
#include "speaker_fixtures.h"

namespace {

using pk::DiarSegment;
using pk::speaker::SpeakerEncoder;
using pk::speaker::SpeakerRegistry;

struct Scene {
    std::unique_ptr<SpeakerEncoder> enc = SpeakerEncoder::load(speaker_fixtures::model_path());
    speaker_fixtures::Reference speech = speaker_fixtures::load("speech");
    speaker_fixtures::Reference conversation = speaker_fixtures::load("conversation");
    std::vector<float> clip;
    Scene() {
        clip = speech.pcm;
        clip.insert(clip.end(), conversation.pcm.begin(), conversation.pcm.end());
    }
    std::vector<float> embed(const std::vector<float>& pcm) const {
        return enc->embed(pcm.data(), static_cast<int64_t>(pcm.size()), 16000);
    }
};

TEST(SlotNames, EnrolledVoicesAreNamedAndAnImpostorIsNot) {
    const Scene s;
    const std::vector<DiarSegment> segs = {{0, 0.0, 2.0}, {1, 2.0, 4.0}};
    SpeakerRegistry reg;
    reg.add("Ada", s.embed(s.speech.pcm).data(), 192);
    reg.add("Bob", s.embed(s.conversation.pcm).data(), 192);
    // The two voices are at cosine 0.95 under this fixture's random network: a margin of 0.01
    // separates them (the default 0.05 would not).
    auto v = pk::speaker::slot_voices(segs, *s.enc, reg, s.clip.data(), s.clip.size(), 16000, 0.5f, 0.01f);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].match.name, "Ada");
    EXPECT_NEAR(v[0].match.score, 1.0, 1e-5);
    EXPECT_EQ(v[1].match.name, "Bob");
    EXPECT_NEAR(v[1].match.score, 1.0, 1e-5);
    EXPECT_EQ(v[1].unavailable_reason, "");
    ASSERT_EQ(v[1].intervals.size(), 1u);
    EXPECT_DOUBLE_EQ(v[1].intervals[0].start, 2.0);
    EXPECT_DOUBLE_EQ(v[1].clean_duration, 2.0);
    EXPECT_EQ(v[1].embedding, s.embed(s.conversation.pcm));  // the slot's audio is that clip

    // Only Eve (the speech voice) enrolled, at a strict threshold: slot 1 is an impostor.
    SpeakerRegistry eve;
    eve.add("Eve", s.embed(s.speech.pcm).data(), 192);
    v = pk::speaker::slot_voices(segs, *s.enc, eve, s.clip.data(), s.clip.size(), 16000, 0.99f, 0.01f);
    EXPECT_EQ(v[0].match.name, "Eve");
    EXPECT_EQ(v[1].match.name, "");
    EXPECT_GT(v[1].match.score, 0.5f);
    EXPECT_LT(v[1].match.score, 0.99f);
}

TEST(SlotNames, TooLittleCleanVoiceOrNoRegistryLeavesSlotsUnnamed) {
    const Scene s;
    SpeakerRegistry reg;
    reg.add("Ada", s.embed(s.speech.pcm).data(), 192);
    // Slot 2 talks over slot 0 from 1.0 s: slot 0 keeps 1 s of clean voice, slot 2 none.
    const std::vector<DiarSegment> segs = {{0, 0.0, 2.0}, {2, 1.0, 2.0}};
    auto v = pk::speaker::slot_voices(segs, *s.enc, reg, s.clip.data(), s.clip.size(), 16000);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].match.name, "");
    EXPECT_EQ(v[0].match.score, 0.0f);
    EXPECT_EQ(v[0].unavailable_reason, "insufficient_clean_speech");
    EXPECT_DOUBLE_EQ(v[0].clean_duration, 1.0);
    EXPECT_TRUE(v[0].embedding.empty());
    EXPECT_EQ(v[2].match.name, "");
    EXPECT_TRUE(v[2].intervals.empty());
    // An empty registry: nothing embedded, unless asked (the profiles call).
    v = pk::speaker::slot_voices({{0, 0.0, 2.0}}, *s.enc, SpeakerRegistry{}, s.clip.data(), s.clip.size(), 16000);
    EXPECT_EQ(v[0].match.name, "");
    EXPECT_TRUE(v[0].embedding.empty());
    v = pk::speaker::slot_voices({{0, 0.0, 2.0}}, *s.enc, SpeakerRegistry{}, s.clip.data(), s.clip.size(), 16000, 0,
                                 0, /*embed_always=*/true);
    EXPECT_EQ(v[0].embedding, s.embed(s.speech.pcm));
    EXPECT_EQ(v[0].match.score, 0.0f);
}

}  // namespace
