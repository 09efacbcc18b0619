// The word-to-speaker rule (model/sas/speaker_words.h) on constructed words and segments whose
// answers are known by hand: most overlap, the first of equal overlaps, the nearest segment
// within 0.5 s, the later of equal gaps, the 0.5 s edge on both sides, no segments at all; and
// utterances (runs of one speaker, pauses of at most 0.5 s, minimum confidence).
#include <gtest/gtest.h>

#include <vector>

#include "model/sas/speaker_words.h"

namespace {

pk::TranscriptWord word(const char* text, double start, double end, float conf = 0.9f) {
    pk::TranscriptWord w;
    w.text = text;
    w.start_sec = start;
    w.end_sec = end;
    w.confidence = conf;
    return w;
}

std::vector<int> speakers(const std::vector<pk::TranscriptWord>& words, const std::vector<pk::DiarSegment>& segs) {
    return pk::word_speakers(words, segs);
}

TEST(SasSpeakerWords, TheSegmentWithTheMostOverlapWins) {
    // [1.0, 2.0] overlaps speaker 0 by 0.3 s and speaker 1 by 0.7 s.
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{0, 0.0, 1.3}, {1, 1.3, 3.0}}), std::vector<int>{1});
    // Speaker 2's segment inside the word (0.2 s) loses to speaker 0's 0.4 s.
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{0, 0.5, 1.4}, {2, 1.5, 1.7}}), std::vector<int>{0});
}

TEST(SasSpeakerWords, EqualOverlapsGoToTheFirstSegmentInScanOrder) {
    // 0.5 s of each.
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{3, 0.0, 1.5}, {1, 1.5, 3.0}}), std::vector<int>{3});
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{1, 0.5, 1.5}, {3, 1.5, 2.5}}), std::vector<int>{1});
    // Two speakers over the whole word (an overlap in the conversation): the first listed.
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{0, 0.0, 3.0}, {2, 0.5, 2.5}}), std::vector<int>{0});
}

TEST(SasSpeakerWords, AWordWithoutOverlapTakesTheNearestSegmentWithinHalfASecond) {
    // Gaps 0.3 s (speaker 0 ends at 0.7) and 0.2 s (speaker 1 starts at 2.2).
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{0, 0.0, 0.7}, {1, 2.2, 3.0}}), std::vector<int>{1});
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{0, 0.0, 0.9}, {1, 2.4, 3.0}}), std::vector<int>{0});
    // Touching (gap 0) is not an overlap but the nearest segment.
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{2, 2.0, 3.0}}), std::vector<int>{2});
}

TEST(SasSpeakerWords, EqualGapsGoToTheLaterSegment) {
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{0, 0.0, 0.8}, {1, 2.2, 3.0}}), std::vector<int>{1});
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{1, 0.0, 0.8}, {0, 2.2, 3.0}}), std::vector<int>{0});
}

TEST(SasSpeakerWords, AZeroLengthWordInsideSegmentsTakesTheLastOfThem) {
    // No overlap with either (the intersection is a point), gap 0 to both: the later wins.
    EXPECT_EQ(speakers({word("f", 1.68, 1.68)}, {{1, 1.44, 1.84}, {2, 1.6, 1.84}}), std::vector<int>{2});
    EXPECT_EQ(speakers({word("f", 1.68, 1.68)}, {{2, 1.44, 1.84}, {1, 1.6, 1.84}, {0, 2.5, 3.0}}),
              std::vector<int>{1});
}

TEST(SasSpeakerWords, HalfASecondIsTheEdge) {
    // Exactly 0.5 s before or after: taken, also where the subtraction rounds above 0.5
    // (2.14 - 1.64 is 0.5000000000000002 in doubles).
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{0, 2.5, 3.0}}), std::vector<int>{0});
    EXPECT_EQ(speakers({word("a", 1.0, 1.64)}, {{1, 2.14, 3.0}}), std::vector<int>{1});
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{2, 0.0, 0.5}}), std::vector<int>{2});
    // 0.51 s: nobody.
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {{0, 2.51, 3.0}, {1, 0.0, 0.49}}), std::vector<int>{-1});
    EXPECT_EQ(speakers({word("a", 1.0, 2.0)}, {}), std::vector<int>{-1});
}

TEST(SasSpeakerWords, EveryWordIsDecidedOnItsOwn) {
    const std::vector<pk::DiarSegment> segs = {{0, 0.0, 1.0}, {1, 1.0, 2.0}, {0, 5.0, 6.0}};
    const std::vector<pk::TranscriptWord> words = {word("a", 0.1, 0.5), word("b", 0.9, 1.6), word("c", 3.0, 3.5),
                                                   word("d", 4.6, 4.8), word("e", 5.5, 6.2)};
    EXPECT_EQ(speakers(words, segs), (std::vector<int>{0, 1, -1, 0, 0}));
}

TEST(SasSpeakerWords, UtterancesAreRunsOfOneSpeakerWithShortPauses) {
    const std::vector<pk::TranscriptWord> words = {word("hello", 0.0, 0.4, 0.9f), word("there", 0.5, 0.9, 0.6f),
                                                   word("again", 1.4, 1.8, 0.8f),  // pause 0.5: same utterance
                                                   word("later", 2.4, 2.8, 0.7f),  // pause 0.6: a new one
                                                   word("hi", 2.9, 3.0, 0.95f), word("bye", 3.1, 3.3, 0.5f)};
    const std::vector<int> who = {0, 0, 0, 0, 1, 0};
    const std::vector<pk::SasItem> u = pk::speaker_utterances(words, who);
    ASSERT_EQ(u.size(), 4u);
    EXPECT_EQ(u[0].speaker, 0);
    EXPECT_EQ(u[0].text, "hello there again");
    EXPECT_DOUBLE_EQ(u[0].start, 0.0);
    EXPECT_DOUBLE_EQ(u[0].end, 1.8);
    EXPECT_FLOAT_EQ(u[0].confidence, 0.6f);
    EXPECT_EQ(u[1].text, "later");
    EXPECT_EQ(u[2].speaker, 1);
    EXPECT_EQ(u[2].text, "hi");
    EXPECT_EQ(u[3].speaker, 0);
    EXPECT_EQ(u[3].text, "bye");
    EXPECT_TRUE(pk::speaker_utterances({}, {}).empty());
}

}  // namespace
