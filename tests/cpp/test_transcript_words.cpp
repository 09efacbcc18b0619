// Text, words, word times and word confidences from decoded tokens. The expected values were
// produced by NeMo 3.0.0 itself (RNNTBPEDecoding.compute_rnnt_timestamps /
// CTCBPEDecoding.ctc_decoder_predictions_tensor + process_timestamp_outputs(subsampling 8,
// window_stride 0.01)) on a model with this 64-piece SentencePiece vocabulary.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/errors.h"
#include "model/decoder/punctuation.h"
#include "model/decoder/word_timestamps.h"
#include "model/text/tokenizer.h"

namespace {

const std::vector<std::string> kPieces = {
    "<unk>", "er", "▁t", "▁s", "▁th", "▁w", "ne", "▁a", "ver", "▁l", "▁o", "▁p", "in", "om", "at", "or",
    "Th", "▁Th", "es", "ar", "ig", "▁e", "very", "ome", "is", "▁m", "▁n", "▁g", "ou", "▁", "e", "o",
    "s", "t", "a", "n", "r", "i", "h", "l", "m", "g", "w", "y", "d", "p", "u", "v",
    ".", "c", "f", "b", "k", "T", ",", "?", "q", "E", "S", "O", "N", "A", "x", "z"};

int id_of(const std::string& piece) {
    for (size_t i = 0; i < kPieces.size(); ++i)
        if (kPieces[i] == piece) return static_cast<int>(i);
    ADD_FAILURE() << "no piece " << piece;
    return 0;
}

struct Tok {
    const char* piece;
    int frame;
    int duration;
    float conf;
};

std::vector<pk::TranscriptToken> tokens(const std::vector<Tok>& in) {
    std::vector<pk::TranscriptToken> out;
    for (const Tok& t : in) out.push_back({id_of(t.piece), t.frame, t.duration, t.conf});
    return out;
}

struct Word {
    std::string text;
    double start, end;
};

void expect_words(const pk::Transcript& tr, const std::vector<Word>& want) {
    ASSERT_EQ(tr.words.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(tr.words[i].text, want[i].text) << "word " << i;
        EXPECT_NEAR(tr.words[i].start_sec, want[i].start, 1e-12) << "word " << i;
        EXPECT_NEAR(tr.words[i].end_sec, want[i].end, 1e-12) << "word " << i;
    }
}

class TranscriptWords : public ::testing::Test {
protected:
    pk::Tokenizer tokenizer{kPieces};
    pk::TranscriptBuilder builder{tokenizer, 0.01, 8};
};

const std::vector<Tok> kSentence = {
    {"▁Th", 0, 1, 0.9f}, {"e", 1, 2, 0.8f},  {"▁w", 4, 0, 0.7f},  {"or", 4, 1, 0.95f},  {".", 9, 3, 0.6f},
    {"▁a", 12, 1, 0.5f}, {",", 13, 0, 0.99f}, {"▁s", 15, 2, 0.4f}, {"ome", 17, 1, 0.3f}, {"?", 20, 2, 0.45f}};

TEST_F(TranscriptWords, TdtWordsSpanTokenDurationsAndPunctuationTakesThePreviousEnd) {
    const pk::Transcript tr = builder.build(tokens(kSentence), pk::TimestampRule::Tdt);
    EXPECT_EQ(tr.text, "The wor. a, some?");
    EXPECT_DOUBLE_EQ(tr.frame_sec, 0.08);
    expect_words(tr, {{"The", 0.0, 0.24}, {"wor.", 0.32, 0.4}, {"a,", 0.96, 1.04}, {"some?", 1.2, 1.44}});
    // Word confidence = min over the word's tokens, punctuation included.
    const float conf[] = {0.8f, 0.6f, 0.5f, 0.3f};
    const int first[] = {0, 2, 5, 7};
    const int count[] = {2, 3, 2, 3};
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(tr.words[i].confidence, conf[i]);
        EXPECT_EQ(tr.words[i].first_token, first[i]);
        EXPECT_EQ(tr.words[i].n_tokens, count[i]);
    }
    ASSERT_EQ(tr.tokens.size(), kSentence.size());
    EXPECT_EQ(tr.tokens[4].frame, 9);  // token times stay as decoded
    EXPECT_EQ(tr.tokens[4].duration, 3);
}

// Times come from integer frame indices multiplied once (frame x stride x subsampling, NeMo's
// order), so a word at the end of a 3-hour recording (135000 frames) has the exact time, with
// no drift from summing per-frame steps.
TEST_F(TranscriptWords, WordTimesAtTheEndOfAThreeHourFileAreExact) {
    const int last = 3 * 3600 * 100 / 8 - 5;  // 134995
    const pk::Transcript tr =
        builder.build(tokens({{"▁Th", last - 3, 1, 0.9f}, {"e", last - 2, 1, 0.9f}, {"▁w", last, 2, 0.9f}}),
                      pk::TimestampRule::Tdt);
    ASSERT_EQ(tr.words.size(), 2u);
    // Exact decimal values: 134992 x 0.08 = 10799.36, 134995 x 0.08 = 10799.6.
    EXPECT_NEAR(tr.words[0].start_sec, 10799.36, 1e-9);
    EXPECT_NEAR(tr.words[0].end_sec, 10799.52, 1e-9);
    EXPECT_NEAR(tr.words[1].start_sec, 10799.6, 1e-9);
    EXPECT_NEAR(tr.words[1].end_sec, 10799.76, 1e-9);
    EXPECT_NEAR(tr.token_seconds(tr.tokens[2]), 10799.6, 1e-9);
}

TEST_F(TranscriptWords, RnntTokensLastOneFrame) {
    const pk::Transcript tr = builder.build(tokens(kSentence), pk::TimestampRule::Rnnt);
    EXPECT_EQ(tr.text, "The wor. a, some?");
    expect_words(tr, {{"The", 0.0, 0.16}, {"wor.", 0.32, 0.8}, {"a,", 0.96, 1.12}, {"some?", 1.2, 1.68}});
}

const std::vector<Tok> kOdd = {{".", 0, 1, 1.f}, {"▁", 2, 1, 1.f},  {"in", 3, 1, 1.f}, {"▁", 5, 2, 1.f},
                               {".", 7, 1, 1.f}, {"s", 8, 0, 1.f},  {"▁t", 9, 1, 1.f}, {"▁", 11, 1, 1.f}};

TEST_F(TranscriptWords, LeadingPunctuationLoneWordMarksAndSpaceBeforeMarks) {
    const pk::Transcript tdt = builder.build(tokens(kOdd), pk::TimestampRule::Tdt);
    EXPECT_EQ(tdt.text, ". in.s t ");
    expect_words(tdt, {{".", 0.0, 0.08}, {"in", 0.16, 0.32}, {".s", 0.4, 0.64}, {"t", 0.72, 0.8}, {"", 0.88, 0.96}});
    const pk::Transcript rnnt = builder.build(tokens(kOdd), pk::TimestampRule::Rnnt);
    expect_words(rnnt, {{".", 0.0, 0.08}, {"in", 0.16, 0.32}, {".s", 0.4, 0.72}, {"t", 0.72, 0.8}, {"", 0.88, 0.96}});
}

TEST_F(TranscriptWords, CtcOffsetsRunFromThePreviousTokenAndMarksEndWhereTheyStart) {
    // Frames are each run's first frame; durations are run lengths; confidences are NeMo's.
    const std::vector<Tok> ctc = {{"▁th", 1, 2, 0.973019f}, {"e", 3, 1, 0.955254f},  {"e", 5, 1, 0.895417f},
                                  {".", 6, 2, 0.513857f},   {"▁w", 9, 1, 0.778252f},  {"or", 10, 1, 0.667381f},
                                  {",", 12, 1, 0.760550f},  {"▁a", 13, 1, 0.791566f}};
    const pk::Transcript tr = builder.build(tokens(ctc), pk::TimestampRule::Ctc);
    EXPECT_EQ(tr.text, "thee. wor, a");
    expect_words(tr, {{"thee.", 0.0, 0.4}, {"wor,", 0.48, 0.8}, {"a", 0.96, 1.04}});
    EXPECT_EQ(tr.words[0].confidence, 0.513857f);
    EXPECT_EQ(tr.words[1].confidence, 0.667381f);
    EXPECT_EQ(tr.words[2].confidence, 0.791566f);
}

TEST_F(TranscriptWords, NoTokensNoWords) {
    const pk::Transcript tr = builder.build({}, pk::TimestampRule::Tdt);
    EXPECT_EQ(tr.text, "");
    EXPECT_TRUE(tr.words.empty());
    EXPECT_TRUE(tr.tokens.empty());
}

TEST_F(TranscriptWords, IdsOutsideTheVocabularyAreRejected) {
    EXPECT_THROW(builder.build({{64, 0, 1, 1.f}}, pk::TimestampRule::Tdt), pk::InvalidArgument);
    EXPECT_THROW(builder.build({{-1, 0, 1, 1.f}}, pk::TimestampRule::Ctc), pk::InvalidArgument);
}

TEST_F(TranscriptWords, SupportedPunctuationComesFromNonSpecialPieces) {
    const pk::SupportedPunctuation& p = builder.punctuation();
    EXPECT_TRUE(p.contains(U'.'));
    EXPECT_TRUE(p.contains(U','));
    EXPECT_TRUE(p.contains(U'?'));
    EXPECT_FALSE(p.contains(U'!'));
}

TEST(Punctuation, UnicodeCategoryP) {
    for (char32_t c : {U'!', U'"', U'#', U'%', U'\'', U'-', U'.', U'@', U'_', U'}', U'\u00A1', U'\u00BF',
                       U'\u00AB', U'\u2014', U'\u2026', U'\u3001', U'\uFF0C', U'\U0001E95E'})
        EXPECT_TRUE(pk::is_unicode_punctuation(c)) << static_cast<uint32_t>(c);
    for (char32_t c : {U'$', U'+', U'<', U'=', U'^', U'`', U'|', U'~', U'a', U'0', U' ', U'\u20AC', U'\u00B0',
                       U'\u2581', U'\U0010FFFF'})
        EXPECT_FALSE(pk::is_unicode_punctuation(c)) << static_cast<uint32_t>(c);
}

TEST(Punctuation, SpecialPiecesDoNotContributeAndOneSpaceGoesBeforeEachMark) {
    const pk::SupportedPunctuation p({"<unk>", "▁'", "'s", "\xC2\xBF", "##x!", "[x]", "a-b", "▁.", "<0x2C>", " "});
    EXPECT_TRUE(p.contains(U'\''));
    EXPECT_TRUE(p.contains(U'\u00BF'));
    EXPECT_TRUE(p.contains(U'-'));
    EXPECT_FALSE(p.contains(U'.'));
    EXPECT_FALSE(p.contains(U'!'));
    EXPECT_FALSE(p.contains(U','));
    EXPECT_EQ(p.strip_space_before_marks("a ' b \xC2\xBF" "c  - d ."), "a' b\xC2\xBF" "c - d .");
    EXPECT_EQ(p.strip_space_before_marks("x\xC2\xA0-y"), "x-y");  // no-break space is \s too
    EXPECT_EQ(p.strip_space_before_marks(" "), " ");
    EXPECT_TRUE(p.is_mark("'"));
    EXPECT_FALSE(p.is_mark("''"));
    EXPECT_TRUE(p.starts_with_mark("'s"));
    EXPECT_FALSE(p.starts_with_mark("s'"));
}

TEST(Punctuation, NoMarksLeavesTextAlone) {
    const pk::SupportedPunctuation p({"▁a", "b"});
    EXPECT_TRUE(p.empty());
    EXPECT_EQ(p.strip_space_before_marks("a . b"), "a . b");
}

}  // namespace
