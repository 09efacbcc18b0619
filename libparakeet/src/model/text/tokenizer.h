// Tokenizer: SentencePiece pieces (stored in the model file, index = token id) back to text.
//
// Decoding follows SentencePiece's own rules, which is what NeMo's ids_to_text returns:
// pieces are concatenated, the word-boundary mark "▁" (U+2581) becomes a space, word marks at
// the very start of the text are dropped (up to the first piece with visible text), byte
// pieces "<0xNN>" are joined back into UTF-8, the unknown piece "<unk>" reads " ⁇ " (its
// spaces kept, even at the start), and control pieces ("<s>", "</s>", "<pad>") vanish.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pk {

class Tokenizer {
public:
    explicit Tokenizer(std::vector<std::string> pieces);

    int vocab_size() const { return static_cast<int>(pieces_.size()); }
    const std::string& piece(int id) const { return pieces_.at(static_cast<size_t>(id)); }

    // Text of a token sequence. Ids outside [0, vocab_size) are skipped.
    std::string decode(const std::vector<int>& ids) const;

    // True when the token opens a new word (its piece starts with "▁"): how words are cut
    // for word timestamps and confidences.
    bool starts_word(int id) const { return starts_word_.at(static_cast<size_t>(id)) != 0; }

private:
    enum class Kind : uint8_t { Normal, Byte, Unknown, Control };

    std::vector<std::string> pieces_;
    std::vector<std::string> surface_;  // Normal: the piece with "▁" replaced by " "
    std::vector<Kind> kind_;
    std::vector<uint8_t> byte_;         // Byte: the byte value
    std::vector<uint8_t> starts_word_;
};

}  // namespace pk
