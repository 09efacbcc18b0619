// Punctuation as NeMo's decoding treats it. NeMo derives a model's "supported punctuation"
// from its vocabulary (tokenizer_utils.py extract_punctuation_from_vocab): every character of
// Unicode category P found in a piece that is not special — not "<...>", "[...]", "##...",
// "▁..." or blank. It then
//   - removes one whitespace character before each such mark in the text
//     (decode_tokens_to_str_with_strip_punctuation: re.sub(r'(\s)(marks)', r'\2', text));
//   - attaches punctuation tokens to the preceding word and moves their timestamps
//     (see word_timestamps.h).
#pragma once

#include <string>
#include <vector>

namespace pk {

// Unicode general category P* (Python unicodedata, which NeMo uses).
bool is_unicode_punctuation(char32_t cp);

// Next code point of UTF-8 `s` at byte `pos` (advanced past it); U+FFFD for a malformed byte.
char32_t next_code_point(const std::string& s, size_t& pos);

class SupportedPunctuation {
public:
    SupportedPunctuation() = default;
    explicit SupportedPunctuation(const std::vector<std::string>& pieces);

    bool empty() const { return marks_.empty(); }
    bool contains(char32_t cp) const;
    // `text` is exactly one supported mark (NeMo: `text in supported_punctuation`).
    bool is_mark(const std::string& text) const;
    // The first character of `text` is a supported mark (NeMo CTC: `text[0] in ...`).
    bool starts_with_mark(const std::string& text) const;
    // `text` without the whitespace character right before each supported mark.
    std::string strip_space_before_marks(const std::string& text) const;

private:
    std::vector<char32_t> marks_;  // sorted, unique
};

}  // namespace pk
