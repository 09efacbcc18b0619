// Tokenizer decoding follows SentencePiece: word marks become spaces, the leading space goes,
// byte pieces rebuild UTF-8, <unk> reads " ⁇ ", control pieces vanish.
#include <gtest/gtest.h>

#include "model/text/tokenizer.h"

namespace {

const std::vector<std::string> kPieces = {
    "<unk>", "\xE2\x96\x81the", "\xE2\x96\x81qu", "ick", "\xE2\x96\x81", "s", ".", "<s>",
    "<0xC3>", "<0xA9>", "\xE2\x96\x81" "caf",
};

TEST(Tokenizer, JoinsPiecesAndTurnsWordMarksIntoSpaces) {
    pk::Tokenizer tok(kPieces);
    EXPECT_EQ(tok.decode({1, 2, 3, 6}), "the quick.");
    EXPECT_EQ(tok.decode({3, 1}), "ick the");
    EXPECT_EQ(tok.decode({4, 5}), "s");
    EXPECT_EQ(tok.decode({}), "");
}

TEST(Tokenizer, BytePiecesRebuildUtf8) {
    pk::Tokenizer tok(kPieces);
    EXPECT_EQ(tok.decode({10, 8, 9}), "caf\xC3\xA9");
}

TEST(Tokenizer, UnknownAndControlPieces) {
    pk::Tokenizer tok(kPieces);
    EXPECT_EQ(tok.decode({1, 0, 1}), "the \xE2\x81\x87  the");
    EXPECT_EQ(tok.decode({7, 1}), "the");
    EXPECT_EQ(tok.decode({1, 99, -1}), "the");  // out-of-range ids are skipped
}

// Two SentencePiece rules at the start of a text, checked against sentencepiece itself:
// [<unk>, ▁the] decodes to " ⁇  the", and [▁, ▁, ick] to "ick".
TEST(Tokenizer, StartOfTextFollowsSentencePiece) {
    pk::Tokenizer tok(kPieces);
    EXPECT_EQ(tok.decode({0, 1}), " \xE2\x81\x87  the");
    EXPECT_EQ(tok.decode({4, 4, 3}), "ick");
    EXPECT_EQ(tok.decode({7, 4, 1}), "the");
}

TEST(Tokenizer, WordStarts) {
    pk::Tokenizer tok(kPieces);
    EXPECT_TRUE(tok.starts_word(1));
    EXPECT_TRUE(tok.starts_word(4));
    EXPECT_FALSE(tok.starts_word(3));
    EXPECT_FALSE(tok.starts_word(0));
}

}  // namespace
