// Shared by the batched transcription tests (test_request_batcher, test_request_set): two
// transcripts of one request are the same to the bit — text, attention, every token (id, frame,
// duration, the confidence's bits) and every word (text, times, the confidence's bits).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "model/transcript/transcript.h"

namespace transcript_checks {

inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// `what` names the request in the failures.
inline void expect_same(const pk::Transcript& alone, const pk::Transcript& batched, const std::string& what) {
    EXPECT_EQ(alone.text, batched.text) << what;
    EXPECT_EQ(alone.attention, batched.attention) << what;
    ASSERT_EQ(alone.tokens.size(), batched.tokens.size()) << what;
    for (size_t i = 0; i < alone.tokens.size(); ++i) {
        const pk::TranscriptToken &a = alone.tokens[i], &b = batched.tokens[i];
        EXPECT_TRUE(a.id == b.id && a.frame == b.frame && a.duration == b.duration &&
                    same_bits(a.confidence, b.confidence))
            << what << ": token " << i;
    }
    ASSERT_EQ(alone.words.size(), batched.words.size()) << what;
    for (size_t i = 0; i < alone.words.size(); ++i) {
        const pk::TranscriptWord &a = alone.words[i], &b = batched.words[i];
        EXPECT_TRUE(a.text == b.text && a.start_sec == b.start_sec && a.end_sec == b.end_sec &&
                    same_bits(a.confidence, b.confidence))
            << what << ": word " << i;
    }
}

}  // namespace transcript_checks
