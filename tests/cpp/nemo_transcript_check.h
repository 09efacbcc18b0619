// Compares one of our transcripts with a head's decoded result in a NeMo reference file
// (ref.<head>.* keys, docs/fixtures.md): token ids, frames and TDT durations exactly, text
// exactly, confidences and word times within bounds. Shared by the NeMo parity tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/transcript/transcript.h"

namespace nemo_fixtures {

constexpr double kConfidenceBound = 1e-3;
constexpr double kTimeBound = 1e-4;  // seconds: word times are whole frames on both sides

// `head` is "tdt", "rnnt" or "ctc". On the first token whose id, frame or duration differs,
// fails naming its index and both sides' (id, frame, duration). `until_tie` >= 0 compares only
// NeMo's first `until_tie` tokens (ids, frames, durations, confidences): from there on NeMo
// decided a near-tie that float32 rounding may decide the other way (ref.<h>.first_tie_token).
inline void expect_transcript_matches(const pk::Transcript& t, const pk::GgufReader& ref, const std::string& head,
                                      int64_t until_tie = -1) {
    const std::string p = "ref." + head + ".";
    const auto ids = ref.get_i64_array(p + "ids");
    const auto frames = ref.get_i64_array(p + "frames");
    const bool tdt = head == "tdt";
    const auto durations = tdt ? ref.get_i64_array(p + "durations") : std::vector<int64_t>(ids.size(), 0);
    const auto conf = ref.get_f32_array(p + "token_conf");
    if (until_tie >= 0) {
        const size_t n = static_cast<size_t>(until_tie);
        ASSERT_LE(n, ids.size());
        ASSERT_GE(t.tokens.size(), n) << "fewer tokens than NeMo's before its first near-tie";
        for (size_t i = 0; i < n; ++i) {
            ASSERT_TRUE(t.tokens[i].id == ids[i] && t.tokens[i].frame == frames[i] &&
                        (!tdt || t.tokens[i].duration == durations[i]))
                << "first differing token " << i << " (before NeMo's first near-tie, token " << n << ")";
            EXPECT_NEAR(t.tokens[i].confidence, conf[i], kConfidenceBound) << "token " << i;
        }
        return;
    }
    const size_t n = std::min(ids.size(), t.tokens.size());
    for (size_t i = 0; i < n; ++i) {
        const auto& k = t.tokens[i];
        ASSERT_TRUE(k.id == ids[i] && k.frame == frames[i] && (!tdt || k.duration == durations[i]))
            << "first differing token " << i << " of " << ids.size() << " (NeMo) / " << t.tokens.size()
            << " (ours): ours (id " << k.id << ", frame " << k.frame << ", duration " << k.duration
            << "), NeMo (id " << ids[i] << ", frame " << frames[i] << ", duration " << durations[i] << ")";
    }
    ASSERT_EQ(t.tokens.size(), ids.size()) << "token count differs from NeMo (the first " << n << " agree)";
    EXPECT_EQ(t.text, ref.get_string(p + "text"));

    ASSERT_EQ(conf.size(), t.tokens.size());
    for (size_t i = 0; i < conf.size(); ++i)
        EXPECT_NEAR(t.tokens[i].confidence, conf[i], kConfidenceBound) << "token " << i;

    const auto words = ref.get_string_array(p + "words");
    const auto word_start = ref.get_f32_array(p + "word_start");
    const auto word_end = ref.get_f32_array(p + "word_end");
    ASSERT_EQ(t.words.size(), words.size());
    for (size_t i = 0; i < words.size(); ++i) {
        EXPECT_EQ(t.words[i].text, words[i]) << "word " << i;
        EXPECT_NEAR(t.words[i].start_sec, word_start[i], kTimeBound) << "word " << i;
        EXPECT_NEAR(t.words[i].end_sec, word_end[i], kTimeBound) << "word " << i;
    }
    const auto conf_words = ref.get_string_array(p + "conf_words");
    const auto word_conf = ref.get_f32_array(p + "word_conf");
    if (conf_words == words) {  // NeMo groups confidence words its own way; compare when they agree
        for (size_t i = 0; i < word_conf.size(); ++i)
            EXPECT_NEAR(t.words[i].confidence, word_conf[i], kConfidenceBound) << "word " << i;
    }
}

// Two of our transcripts are the same bytes: tokens (confidences compared bitwise), words, text.
inline void expect_identical(const pk::Transcript& a, const pk::Transcript& b) {
    ASSERT_EQ(a.text, b.text);
    ASSERT_EQ(a.tokens.size(), b.tokens.size());
    for (size_t k = 0; k < a.tokens.size(); ++k) {
        ASSERT_EQ(a.tokens[k].id, b.tokens[k].id) << "token " << k;
        ASSERT_EQ(a.tokens[k].frame, b.tokens[k].frame) << "token " << k;
        ASSERT_EQ(a.tokens[k].duration, b.tokens[k].duration) << "token " << k;
        ASSERT_EQ(a.tokens[k].confidence, b.tokens[k].confidence) << "token " << k;  // bitwise
    }
    ASSERT_EQ(a.words.size(), b.words.size());
    for (size_t k = 0; k < a.words.size(); ++k) {
        ASSERT_EQ(a.words[k].text, b.words[k].text) << "word " << k;
        ASSERT_EQ(a.words[k].start_sec, b.words[k].start_sec) << "word " << k;
        ASSERT_EQ(a.words[k].end_sec, b.words[k].end_sec) << "word " << k;
        ASSERT_EQ(a.words[k].confidence, b.words[k].confidence) << "word " << k;
    }
}

}  // namespace nemo_fixtures
