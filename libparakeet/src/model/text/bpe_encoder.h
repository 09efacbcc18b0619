// BpeEncoder: text -> token ids, as SentencePiece's BPE model encode() segments it
// (sentencepiece bpe_model.cc, sentencepiece_processor.cc), from the model file's pieces and
// scores alone. Used for hotword phrases; transcription never needs it.
//
// What it does, in SentencePiece's order:
//   - normalisation with the identity rule (the GGUF holds no normaliser table, so text is
//     taken as it is: no NFKC), remove_extra_whitespaces and add_dummy_prefix: leading and
//     trailing spaces go, runs of spaces become one, "▁" (U+2581) is prefixed and replaces
//     every space; malformed UTF-8 bytes become U+FFFD, as SentencePiece's normaliser does;
//   - the text is split into characters, then the adjacent pair whose concatenation is a
//     piece with the highest score is merged (ties: the leftmost), until none is left;
//   - a symbol that is no piece is unknown: with byte pieces ("<0xNN>") in the vocabulary
//     (byte_fallback) it becomes its UTF-8 bytes, otherwise "<unk>", a run of unknown
//     symbols giving one "<unk>".
// Control ("<s>", "</s>", "<pad>"), unknown and byte pieces never take part in merges.
// Without scores (files from converters that do not write parakeet.tokenizer.scores) the
// segmentation falls back to the longest matching piece at each position, as parakeet.cpp
// does then; exact() says which.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace pk {

struct BpeEncoding {
    std::vector<int> ids;
    // The text of the first symbol no piece (or byte piece) represents; "" when every symbol
    // was represented. Its id in `ids` is unknown_id().
    std::string first_unknown;
};

class BpeEncoder {
public:
    // scores: one per piece, or empty (longest-match fallback).
    BpeEncoder(const std::vector<std::string>& pieces, const std::vector<float>& scores);

    BpeEncoding encode(const std::string& text) const;

    // True when segmenting as SentencePiece does (the scores were given).
    bool exact() const { return exact_; }
    // The "<unk>" piece's id, or -1 when the vocabulary has none.
    int unknown_id() const { return unknown_id_; }

    // SentencePiece's normalised form of `text` (see the header comment).
    static std::string normalize(const std::string& text);

private:
    int find(const std::string& piece) const;  // a mergeable piece's id, or -1
    std::vector<std::string> merge_by_score(const std::vector<std::string>& symbols) const;
    std::vector<std::string> longest_match(const std::vector<std::string>& symbols) const;
    void append_symbol(const std::string& symbol, BpeEncoding& out, bool& previous_unknown) const;

    std::unordered_map<std::string, int> ids_;  // normal (mergeable) pieces
    std::vector<float> scores_;
    int byte_ids_[256];
    bool byte_fallback_ = false;
    int unknown_id_ = -1;
    bool exact_ = false;
    size_t longest_piece_ = 0;  // bytes
};

}  // namespace pk
