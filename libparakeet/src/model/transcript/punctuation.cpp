#include "model/transcript/punctuation.h"

#include <algorithm>

namespace pk {
namespace {

const std::string kWordMark = "\xE2\x96\x81";  // U+2581, SentencePiece's word boundary

// What Python's `\s` matches in a str pattern (str.isspace()).
bool is_python_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// NeMo's special_token_patterns: ^\[.*\]$, ^<.*>$, ^##, ^▁, ^\s*$.
bool is_special_piece(const std::string& p) {
    if (p.size() >= 2 && ((p.front() == '[' && p.back() == ']') || (p.front() == '<' && p.back() == '>')))
        return true;
    if (starts_with(p, "##") || starts_with(p, kWordMark)) return true;
    for (size_t pos = 0; pos < p.size();)
        if (!is_python_space(next_code_point(p, pos))) return false;
    return true;
}

}  // namespace

char32_t next_code_point(const std::string& s, size_t& pos) {
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char b0 = byte(pos);
    int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || pos + static_cast<size_t>(len) > s.size()) {
        ++pos;
        return 0xFFFD;
    }
    char32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (int i = 1; i < len; ++i) {
        const unsigned char b = byte(pos + static_cast<size_t>(i));
        if ((b & 0xC0) != 0x80) {
            ++pos;
            return 0xFFFD;
        }
        cp = (cp << 6) | (b & 0x3F);
    }
    pos += static_cast<size_t>(len);
    return cp;
}

SupportedPunctuation::SupportedPunctuation(const std::vector<std::string>& pieces) {
    for (const std::string& p : pieces) {
        if (is_special_piece(p)) continue;
        for (size_t pos = 0; pos < p.size();) {
            const char32_t c = next_code_point(p, pos);
            if (is_unicode_punctuation(c)) marks_.push_back(c);
        }
    }
    std::sort(marks_.begin(), marks_.end());
    marks_.erase(std::unique(marks_.begin(), marks_.end()), marks_.end());
}

bool SupportedPunctuation::contains(char32_t cp) const {
    return std::binary_search(marks_.begin(), marks_.end(), cp);
}

bool SupportedPunctuation::is_mark(const std::string& text) const {
    if (text.empty()) return false;
    size_t pos = 0;
    const char32_t c = next_code_point(text, pos);
    return pos == text.size() && contains(c);
}

bool SupportedPunctuation::starts_with_mark(const std::string& text) const {
    if (text.empty()) return false;
    size_t pos = 0;
    return contains(next_code_point(text, pos));
}

std::string SupportedPunctuation::strip_space_before_marks(const std::string& text) const {
    if (empty()) return text;
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const size_t start = pos;
        const char32_t c = next_code_point(text, pos);
        if (is_python_space(c) && pos < text.size()) {
            size_t next = pos;
            if (contains(next_code_point(text, next))) continue;  // drop this space
        }
        out.append(text, start, pos - start);
    }
    return out;
}

}  // namespace pk
