// parakeet_capi_word_speakers, the word-to-speaker rule through the C ABI, on hand-built words
// and segments whose answers follow from the rule as docs/api.md states it: the most overlap,
// the first of equal overlaps, the nearest segment within 0.5 s (the later of equal gaps, the
// 0.5 s edge written in 10 ms units as float segments hold it), a zero-length word inside
// segments, no segment near; and bad arguments, refused with a thread error.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "parakeet_capi.h"

namespace {

struct W {
    double start, end;
};

std::vector<int> speakers(const std::vector<parakeet_diar_segment>& segs, const std::vector<W>& words) {
    std::vector<double> starts, ends;
    for (const W& w : words) {
        starts.push_back(w.start);
        ends.push_back(w.end);
    }
    std::vector<int> out(words.size(), -7);
    const int rc = parakeet_capi_word_speakers(segs.data(), static_cast<int>(segs.size()), starts.data(), ends.data(),
                                               static_cast<int>(words.size()), out.data(), nullptr);
    EXPECT_EQ(rc, 0) << parakeet_capi_thread_last_error();
    EXPECT_STREQ(parakeet_capi_thread_last_error(), "");
    return out;
}

TEST(CapiWordSpeakers, TheMostOverlapWinsAndTheFirstOfEqualOverlaps) {
    // [1, 2] overlaps speaker 0 by 0.3 s and speaker 1 by 0.7 s.
    EXPECT_EQ(speakers({{0, 0.0f, 1.3f}, {1, 1.3f, 3.0f}}, {{1.0, 2.0}}), std::vector<int>{1});
    // 0.5 s each: the first segment in the order given, whichever speaker it is.
    EXPECT_EQ(speakers({{3, 0.0f, 1.5f}, {1, 1.5f, 3.0f}}, {{1.0, 2.0}}), std::vector<int>{3});
    EXPECT_EQ(speakers({{1, 1.5f, 3.0f}, {3, 0.0f, 1.5f}}, {{1.0, 2.0}}), std::vector<int>{1});
    // Two speakers over the whole word (people talking at once): the first listed.
    EXPECT_EQ(speakers({{0, 0.0f, 3.0f}, {2, 0.5f, 2.5f}}, {{1.0, 2.0}}), std::vector<int>{0});
}

TEST(CapiWordSpeakers, NoOverlapTakesTheNearestWithinHalfASecondTheLaterOnATie) {
    EXPECT_EQ(speakers({{0, 0.0f, 0.7f}, {1, 2.2f, 3.0f}}, {{1.0, 2.0}}), std::vector<int>{1});  // 0.3 / 0.2 s
    EXPECT_EQ(speakers({{0, 0.0f, 0.9f}, {1, 2.4f, 3.0f}}, {{1.0, 2.0}}), std::vector<int>{0});  // 0.1 / 0.4 s
    EXPECT_EQ(speakers({{0, 0.0f, 0.8f}, {1, 2.2f, 3.0f}}, {{1.0, 2.0}}), std::vector<int>{1});  // 0.2 / 0.2 s
    EXPECT_EQ(speakers({{1, 0.0f, 0.8f}, {0, 2.2f, 3.0f}}, {{1.0, 2.0}}), std::vector<int>{0});
}

TEST(CapiWordSpeakers, HalfASecondIsTheEdgeAsFloatSegmentsHoldIt) {
    // 2.14f is 2.1400001049..., 1.23f is 1.2300000190...: read as floats the gaps would pass
    // 0.5 s by more than the tolerance; on the library's 10 ms grid they are 0.5 s.
    EXPECT_EQ(speakers({{1, 2.14f, 3.0f}}, {{1.0, 1.64}}), std::vector<int>{1});
    EXPECT_EQ(speakers({{2, 0.0f, 1.23f}}, {{1.73, 2.0}}), std::vector<int>{2});
    EXPECT_EQ(speakers({{0, 2.5f, 3.0f}}, {{1.0, 2.0}}), std::vector<int>{0});
    // 0.51 s on either side: nobody.
    EXPECT_EQ(speakers({{0, 2.51f, 3.0f}, {1, 0.0f, 0.49f}}, {{1.0, 2.0}}), std::vector<int>{-1});
}

TEST(CapiWordSpeakers, AZeroLengthWordInsideSegmentsTakesTheLastOfThem) {
    EXPECT_EQ(speakers({{1, 1.44f, 1.84f}, {2, 1.6f, 1.84f}}, {{1.68, 1.68}}), std::vector<int>{2});
    EXPECT_EQ(speakers({{2, 1.44f, 1.84f}, {1, 1.6f, 1.84f}, {0, 2.5f, 3.0f}}, {{1.68, 1.68}}), std::vector<int>{1});
}

TEST(CapiWordSpeakers, NoSegmentNearIsMinusOneAndEachWordIsDecidedOnItsOwn) {
    EXPECT_EQ(speakers({}, {{1.0, 2.0}}), std::vector<int>{-1});
    EXPECT_EQ(speakers({{0, 0.0f, 1.0f}, {1, 1.0f, 2.0f}, {0, 5.0f, 6.0f}},
                       {{0.1, 0.5}, {0.9, 1.6}, {3.0, 3.5}, {4.6, 4.8}, {5.5, 6.2}}),
              (std::vector<int>{0, 1, -1, 0, 0}));
    EXPECT_EQ(speakers({{0, 0.0f, 1.0f}}, {}), std::vector<int>{});
}

TEST(CapiWordSpeakers, UtteranceNumbersAreRunsOfOneSpeakerWithPausesOfAtMostHalfASecond) {
    // Speaker 0 says the first four words, 1 the fifth, 0 the last: pauses 0.1, 0.5 (joins) and
    // 0.6 (a new utterance) within speaker 0's first run.
    const std::vector<parakeet_diar_segment> segs = {{0, 0.0f, 2.8f}, {1, 2.85f, 3.05f}, {0, 3.05f, 3.4f}};
    const std::vector<double> starts = {0.0, 0.5, 1.4, 2.4, 2.9, 3.1}, ends = {0.4, 0.9, 1.8, 2.8, 3.0, 3.3};
    std::vector<int> who(6, -7), number(6, -7);
    ASSERT_EQ(parakeet_capi_word_speakers(segs.data(), 3, starts.data(), ends.data(), 6, who.data(), number.data()), 0);
    EXPECT_EQ(who, (std::vector<int>{0, 0, 0, 0, 1, 0}));
    EXPECT_EQ(number, (std::vector<int>{0, 0, 0, 1, 2, 3}));
    // A word inside the run's span (it ends before the previous word does) keeps the run's end.
    const std::vector<double> s2 = {0.0, 0.2, 1.4}, e2 = {1.0, 0.4, 1.6};
    std::vector<int> w2(3), n2(3);
    ASSERT_EQ(parakeet_capi_word_speakers(segs.data(), 1, s2.data(), e2.data(), 3, w2.data(), n2.data()), 0);
    EXPECT_EQ(n2, (std::vector<int>{0, 0, 0}));
}

void expect_refused(int rc, const std::string& message) {
    EXPECT_EQ(rc, 1);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(parakeet_capi_thread_last_error()).find(message), std::string::npos)
        << parakeet_capi_thread_last_error();
}

TEST(CapiWordSpeakers, BadArgumentsAreRefusedWithTheThreadsError) {
    const parakeet_diar_segment seg{0, 0.0f, 1.0f};
    const double s = 0.2, e = 0.4;
    int out = -7;
    expect_refused(parakeet_capi_word_speakers(nullptr, 1, &s, &e, 1, &out, nullptr), "invalid segments buffer");
    expect_refused(parakeet_capi_word_speakers(&seg, -1, &s, &e, 1, &out, nullptr), "invalid segments buffer");
    expect_refused(parakeet_capi_word_speakers(&seg, 1, nullptr, &e, 1, &out, nullptr), "invalid words buffers");
    expect_refused(parakeet_capi_word_speakers(&seg, 1, &s, nullptr, 1, &out, nullptr), "invalid words buffers");
    expect_refused(parakeet_capi_word_speakers(&seg, 1, &s, &e, 1, nullptr, nullptr), "invalid words buffers");
    expect_refused(parakeet_capi_word_speakers(&seg, 1, &s, &e, -1, &out, nullptr), "invalid words buffers");
    const parakeet_diar_segment negative{-1, 0.0f, 1.0f}, backwards{0, 1.0f, 0.5f};
    const parakeet_diar_segment nan_seg{0, std::numeric_limits<float>::quiet_NaN(), 1.0f};
    expect_refused(parakeet_capi_word_speakers(&negative, 1, &s, &e, 1, &out, nullptr), "negative speaker");
    expect_refused(parakeet_capi_word_speakers(&backwards, 1, &s, &e, 1, &out, nullptr), "segment 0 ends before it starts");
    expect_refused(parakeet_capi_word_speakers(&nan_seg, 1, &s, &e, 1, &out, nullptr), "not finite");
    const double inf = std::numeric_limits<double>::infinity();
    expect_refused(parakeet_capi_word_speakers(&seg, 1, &s, &inf, 1, &out, nullptr), "word 0 has a time that is not finite");
    expect_refused(parakeet_capi_word_speakers(&seg, 1, &e, &s, 1, &out, nullptr), "word 0 ends before it starts");
    EXPECT_EQ(out, -7);  // nothing written on a refusal
    // Empty inputs with NULL buffers are fine; a success clears the thread's error.
    EXPECT_EQ(parakeet_capi_word_speakers(nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr), 0);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_NONE);
    EXPECT_STREQ(parakeet_capi_thread_last_error(), "");
}

}  // namespace
