// BpeEncoder segments text exactly as SentencePiece's BPE encode() does: the expected ids come
// from the sentencepiece package (tools/fixtures/make_bpe_encoder_cases.py) on the fixture models'
// tokenizer (pieces and scores read from model.gguf, so through the converter and the model
// config) and on a byte-fallback BPE model trained by that script.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model/gguf_reader.h"
#include "model/model_config.h"
#include "model/text/bpe_encoder.h"
#include "nemo_fixtures.h"

namespace {

struct Case {
    std::string text;
    std::vector<int> ids;
};

struct CaseFile {
    std::vector<std::string> pieces;  // "P" lines, when the file carries its vocabulary
    std::vector<float> scores;
    std::vector<Case> cases;
};

std::string unhex(const std::string& h) {
    std::string out;
    if (h == "-") return out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
    return out;
}

CaseFile read_cases(const std::string& name) {
    const std::string path = nemo_fixtures::data_dir() + "/text/bpe_cases_" + name + ".txt";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    CaseFile f;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string kind, a;
        ls >> kind;
        if (kind == "P") {
            float score = 0;
            ls >> score >> a;
            f.scores.push_back(score);
            f.pieces.push_back(unhex(a));
        } else if (kind == "C") {
            Case c;
            ls >> a;
            c.text = unhex(a);
            for (int id; ls >> id;) c.ids.push_back(id);
            f.cases.push_back(c);
        }
    }
    return f;
}

std::string printable(const std::string& s) {
    std::string out = "\"";
    for (unsigned char ch : s) {
        if (ch >= 0x20 && ch < 0x7F) out += static_cast<char>(ch);
        else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", ch);
            out += buf;
        }
    }
    return out + "\"";
}

void expect_all_equal(const pk::BpeEncoder& enc, const std::vector<Case>& cases) {
    int mismatches = 0;
    for (const Case& c : cases) {
        const std::vector<int> got = enc.encode(c.text).ids;
        if (got != c.ids && ++mismatches <= 10) ADD_FAILURE() << "text " << printable(c.text) << ": ids differ";
    }
    EXPECT_EQ(mismatches, 0) << "of " << cases.size() << " cases";
}

TEST(BpeEncoder, FixtureTokenizerFromTheGgufMatchesSentencePiece) {
    const pk::GgufReader g = pk::GgufReader::open(nemo_fixtures::data_dir() + "/nemo/hybrid_tdt_ctc/model.gguf");
    const pk::ModelConfig cfg = pk::read_model_config(g);
    ASSERT_EQ(cfg.scores.size(), cfg.pieces.size());
    const pk::BpeEncoder enc(cfg.pieces, cfg.scores);
    EXPECT_TRUE(enc.exact());
    const CaseFile f = read_cases("fixture");
    ASSERT_GT(f.cases.size(), 500u);
    expect_all_equal(enc, f.cases);
}

TEST(BpeEncoder, ByteFallbackModelMatchesSentencePiece) {
    const CaseFile f = read_cases("bytefallback");
    ASSERT_GT(f.pieces.size(), 300u);
    const pk::BpeEncoder enc(f.pieces, f.scores);
    expect_all_equal(enc, f.cases);
}

TEST(BpeEncoder, UnknownCharactersAreReportedAndRunsGiveOneUnk) {
    const std::vector<std::string> pieces = {"<unk>", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab"};
    const pk::BpeEncoder enc(pieces, {0.f, -1.f, -2.f, -3.f, -4.f, -5.f});
    const pk::BpeEncoding e = enc.encode("a xyz b");
    EXPECT_EQ(e.ids, (std::vector<int>{4, 1, 0, 1, 3}));
    EXPECT_EQ(e.first_unknown, "x");
    EXPECT_TRUE(enc.encode("ab").first_unknown.empty());
}

TEST(BpeEncoder, NormalisationDropsExtraSpacesAndMarksWords) {
    EXPECT_EQ(pk::BpeEncoder::normalize("  a  b "), "\xE2\x96\x81" "a\xE2\x96\x81" "b");
    EXPECT_EQ(pk::BpeEncoder::normalize("   "), "");
    EXPECT_EQ(pk::BpeEncoder::normalize("a\xFF"), "\xE2\x96\x81" "a\xEF\xBF\xBD");  // malformed -> U+FFFD
}

TEST(BpeEncoder, WithoutScoresTheLongestPieceWins) {
    // BPE with these scores would merge "bc" first (higher score) and give [▁, a, bc]; the
    // longest-match fallback takes "▁ab" then "c".
    const std::vector<std::string> pieces = {"<unk>", "\xE2\x96\x81", "a", "b", "c", "\xE2\x96\x81" "ab", "bc",
                                             "\xE2\x96\x81" "a"};
    const pk::BpeEncoder scored(pieces, {0.f, -5.f, -5.f, -5.f, -5.f, -3.f, -1.f, -2.f});
    EXPECT_EQ(scored.encode("abc").ids, (std::vector<int>{7, 6}));
    const pk::BpeEncoder unscored(pieces, {});
    EXPECT_FALSE(unscored.exact());
    EXPECT_EQ(unscored.encode("abc").ids, (std::vector<int>{5, 4}));
}

}  // namespace
