// The clean audio of a diarized slot (model/speaker/clean_voice.h) on constructed segments:
// overlaps removed, short pieces dropped, the newest window kept.
#include <gtest/gtest.h>

#include "model/speaker/clean_voice.h"

namespace {

using pk::DiarSegment;
using pk::speaker::clean_voice;
using pk::speaker::CleanVoiceRules;

TEST(CleanVoice, OtherSpeakersAreCutOutAndShortPiecesDropped) {
    // Slot 0 speaks 0-5 s; slot 1 overlaps 1.0-1.1 and 4.9-6; the 0.1 s piece between 1.0 and 1.1
    // is not there, the piece 0-1 is kept, 1.1-4.9 kept.
    const std::vector<DiarSegment> segs = {{0, 0.0, 5.0}, {1, 1.0, 1.1}, {1, 4.9, 6.0}};
    const auto c = clean_voice(segs, 0);
    ASSERT_EQ(c.size(), 2u);
    EXPECT_DOUBLE_EQ(c[0].start, 0.0);
    EXPECT_DOUBLE_EQ(c[0].end, 1.0);
    EXPECT_DOUBLE_EQ(c[1].start, 1.1);
    EXPECT_DOUBLE_EQ(c[1].end, 4.9);
    EXPECT_NEAR(pk::speaker::total_seconds(c), 4.8, 1e-12);
    // Slot 1: 1.0 s of its own audio is clean (5.0-6.0; 4.9-5.0 overlaps slot 0, 1.0-1.1 entirely).
    const auto one = clean_voice(segs, 1);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_DOUBLE_EQ(one[0].start, 5.0);
    EXPECT_DOUBLE_EQ(one[0].end, 6.0);
    // A piece under 0.2 s is dropped: slot 0 at 2.0-2.15 between slot 1's turns.
    const std::vector<DiarSegment> tight = {{1, 0.0, 2.0}, {0, 1.9, 2.15}, {1, 2.15, 4.0}};
    EXPECT_TRUE(clean_voice(tight, 0).empty());
    CleanVoiceRules rules;
    rules.min_piece_sec = 0.1;
    EXPECT_EQ(clean_voice(tight, 0, rules).size(), 1u);
}

TEST(CleanVoice, TheNewestWindowIsKept) {
    const std::vector<DiarSegment> segs = {{0, 0.0, 20.0}, {0, 25.0, 45.0}};
    const auto c = clean_voice(segs, 0);  // 40 s of clean voice, the newest 30 s kept
    ASSERT_EQ(c.size(), 2u);
    EXPECT_DOUBLE_EQ(c[0].start, 10.0);
    EXPECT_DOUBLE_EQ(c[0].end, 20.0);
    EXPECT_DOUBLE_EQ(c[1].start, 25.0);
    EXPECT_DOUBLE_EQ(c[1].end, 45.0);
    EXPECT_TRUE(clean_voice(segs, 3).empty());  // a slot with no segment
}

}  // namespace
