// Naming diarized slots live (model/speaker/live_slot_names.h) with the fixture encoder and a
// real registry, on constructed scenes over the fixture clips (speech, conversation: 2 s each):
// a speaker who becomes named, a name that changes only after winning twice, an unknown result
// that keeps the name, an impostor never named, and overlapped audio left out of a slot's voice.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "common/errors.h"
#include "model/speaker/live_slot_names.h"
#include "model/speaker/speaker_encoder.h"
#include "speaker_fixtures.h"

namespace {

using pk::DiarSegment;
using pk::speaker::LiveNamingOptions;
using pk::speaker::LiveSlotNames;
using pk::speaker::SpeakerEncoder;
using pk::speaker::SpeakerRegistry;

struct Voices {
    std::unique_ptr<SpeakerEncoder> enc = SpeakerEncoder::load(speaker_fixtures::model_path());
    std::vector<float> speech = speaker_fixtures::load("speech").pcm;
    std::vector<float> conversation = speaker_fixtures::load("conversation").pcm;
    int embeds = 0;

    std::vector<float> embed(const std::vector<float>& pcm) const { return enc->embed(pcm.data(), pcm.size(), 16000); }

    LiveSlotNames namer(const SpeakerRegistry& reg, const LiveNamingOptions& o) {
        return LiveSlotNames(
            [this](const float* s, int64_t n) {
                ++embeds;
                return enc->embed(s, n, 16000);
            },
            [&reg](const std::vector<float>& e, float accept, float margin) {
                return reg.identify(e.data(), accept, margin);
            },
            16000, o);
    }
};

// Every slot refreshed after each 2 s of new voice, from the newest 2 s.
LiveNamingOptions two_seconds(float accept, float margin) {
    LiveNamingOptions o;
    o.accept = accept;
    o.margin = margin;
    o.min_voice_sec = o.refresh_sec = o.max_voice_sec = 2.f;
    return o;
}

// Feeds `clip` to the namer in 1 s pieces as one open segment of `slot` from `start`, and
// returns the slot's name after each piece.
std::vector<std::string> speak(LiveSlotNames& namer, const std::vector<float>& clip, int slot, double start) {
    std::vector<std::string> names;
    for (size_t at = 0; at < clip.size(); at += 16000) {
        namer.push(clip.data() + at, 16000);
        const double now = start + static_cast<double>(at + 16000) / 16000;
        namer.update({}, {{slot, start, now}}, false);
        names.push_back(namer.name(slot).name);
    }
    return names;
}

TEST(LiveSlotNames, ASpeakerIsNamedAtMinVoiceAndANewNameMustWinTwice) {
    Voices v;
    SpeakerRegistry reg;
    reg.add("Ada", v.embed(v.speech).data(), 192);
    reg.add("Bob", v.embed(v.conversation).data(), 192);
    // The fixture's random network puts the two voices at cosine 0.95: margin 0.01 tells them apart.
    LiveSlotNames namer = v.namer(reg, two_seconds(0.5f, 0.01f));
    EXPECT_EQ(speak(namer, v.speech, 0, 0.0), (std::vector<std::string>{"", "Ada"}));
    EXPECT_NEAR(namer.name(0).score, 1.0, 1e-5);  // its voice is exactly the enrolled clip
    // Bob's voice wins at 4 s (once: Ada stays) and at 6 s (twice: Bob); at 5 s only 1 s is new.
    EXPECT_EQ(speak(namer, v.conversation, 0, 2.0), (std::vector<std::string>{"Ada", "Ada"}));
    EXPECT_EQ(speak(namer, v.conversation, 0, 4.0), (std::vector<std::string>{"Ada", "Bob"}));
    EXPECT_EQ(v.embeds, 3);  // at 2, 4 and 6 s: every 2 s of new voice
    EXPECT_EQ(namer.names().size(), 1u);
}

TEST(LiveSlotNames, AnUnknownVoiceKeepsTheNameAndAnImpostorIsNeverNamed) {
    Voices v;
    SpeakerRegistry reg;
    reg.add("Ada", v.embed(v.speech).data(), 192);
    LiveSlotNames namer = v.namer(reg, two_seconds(0.99f, 0.05f));
    EXPECT_EQ(speak(namer, v.speech, 0, 0.0).back(), "Ada");
    // The conversation voice scores under 0.99 against Ada: unknown, twice; Ada stays.
    EXPECT_EQ(speak(namer, v.conversation, 0, 2.0).back(), "Ada");
    EXPECT_EQ(speak(namer, v.conversation, 0, 4.0).back(), "Ada");
    // Slot 1 only ever has that voice: it stays unnamed, through refreshes and the last update.
    EXPECT_EQ(speak(namer, v.conversation, 1, 6.0), (std::vector<std::string>{"", ""}));
    EXPECT_EQ(speak(namer, v.conversation, 1, 8.0), (std::vector<std::string>{"", ""}));
    namer.update({{1, 6.0, 10.0}}, {}, true);
    EXPECT_EQ(namer.name(1).name, "");
    EXPECT_EQ(namer.names().size(), 2u);
    EXPECT_EQ(namer.names().at(1).name, "");
}

TEST(LiveSlotNames, OverlappedAudioIsNotASlotsVoice) {
    Voices v;
    SpeakerRegistry reg;
    reg.add("Ada", v.embed(v.speech).data(), 192);
    reg.add("Bob", v.embed(v.conversation).data(), 192);
    LiveNamingOptions o = two_seconds(0.5f, 0.01f);
    o.max_voice_sec = 10.f;
    LiveSlotNames namer = v.namer(reg, o);
    std::vector<float> clip = v.speech;
    clip.insert(clip.end(), v.conversation.begin(), v.conversation.end());
    namer.push(clip.data(), static_cast<int64_t>(clip.size()));
    // Slot 1 overlaps slot 0 from 1.5 s: slot 0 keeps 1.5 s of clean voice (under min_voice:
    // unnamed), slot 1 exactly the conversation clip (2-4 s), so its match scores 1.
    namer.update({{0, 0.0, 2.0}, {1, 1.5, 4.0}}, {}, true);
    EXPECT_EQ(v.embeds, 1);
    EXPECT_EQ(namer.name(0).name, "");
    EXPECT_EQ(namer.name(1).name, "Bob");
    EXPECT_NEAR(namer.name(1).score, 1.0, 1e-5);
}

TEST(LiveSlotNames, BadOptionsAreRefusedWithTheirReason) {
    LiveNamingOptions o;
    o.max_voice_sec = 1.f;
    try {
        pk::speaker::validate_live_naming(o);
        FAIL() << "max_voice under min_voice was accepted";
    } catch (const pk::InvalidArgument& e) {
        EXPECT_STREQ(e.what(), "invalid speaker options: max_voice_sec must be >= min_voice_sec");
    }
    o = LiveNamingOptions{};
    o.accept = 1.5f;
    EXPECT_THROW(pk::speaker::validate_live_naming(o), pk::InvalidArgument);
}

}  // namespace
