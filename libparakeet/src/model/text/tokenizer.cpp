#include "model/text/tokenizer.h"

#include <cstdlib>

namespace pk {
namespace {

const std::string kWordMark = "\xE2\x96\x81";      // U+2581 LOWER ONE EIGHTH BLOCK
const std::string kUnknownSurface = " \xE2\x81\x87 ";  // U+2047 DOUBLE QUESTION MARK, spaced

bool is_byte_piece(const std::string& p, uint8_t& value) {
    // "<0xNN>" with two hex digits.
    if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>') return false;
    char* end = nullptr;
    const std::string hex = p.substr(3, 2);
    const long v = std::strtol(hex.c_str(), &end, 16);
    if (end != hex.c_str() + 2) return false;
    value = static_cast<uint8_t>(v);
    return true;
}

std::string replace_word_marks(const std::string& p) {
    std::string out;
    out.reserve(p.size());
    for (size_t i = 0; i < p.size();) {
        if (p.compare(i, kWordMark.size(), kWordMark) == 0) {
            out += ' ';
            i += kWordMark.size();
        } else {
            out += p[i++];
        }
    }
    return out;
}

}  // namespace

Tokenizer::Tokenizer(std::vector<std::string> pieces) : pieces_(std::move(pieces)) {
    const size_t n = pieces_.size();
    surface_.resize(n);
    kind_.resize(n, Kind::Normal);
    byte_.resize(n, 0);
    starts_word_.resize(n, 0);
    for (size_t i = 0; i < n; ++i) {
        const std::string& p = pieces_[i];
        uint8_t b = 0;
        if (p == "<unk>") {
            kind_[i] = Kind::Unknown;
        } else if (p == "<s>" || p == "</s>" || p == "<pad>") {
            kind_[i] = Kind::Control;
        } else if (is_byte_piece(p, b)) {
            kind_[i] = Kind::Byte;
            byte_[i] = b;
        } else {
            surface_[i] = replace_word_marks(p);
        }
        starts_word_[i] = p.compare(0, kWordMark.size(), kWordMark) == 0;
    }
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
    std::string out;
    // SentencePiece strips the word marks at the start of the text: every leading "▁" of each
    // piece until one piece yields visible text (so lone "▁" pieces at the start vanish), but
    // not the spaces of the unknown surface " ⁇ ".
    bool at_start = true;
    for (int id : ids) {
        if (id < 0 || id >= vocab_size()) continue;
        const size_t i = static_cast<size_t>(id);
        switch (kind_[i]) {
            case Kind::Normal: {
                const std::string& surface = surface_[i];
                size_t skip = 0;
                if (at_start) {
                    while (skip < surface.size() && surface[skip] == ' ') ++skip;
                }
                out.append(surface, skip, std::string::npos);
                if (skip < surface.size()) at_start = false;
                break;
            }
            case Kind::Byte:
                out += static_cast<char>(byte_[i]);
                at_start = false;
                break;
            case Kind::Unknown:
                out += kUnknownSurface;
                at_start = false;
                break;
            case Kind::Control: break;
        }
    }
    return out;
}

}  // namespace pk
