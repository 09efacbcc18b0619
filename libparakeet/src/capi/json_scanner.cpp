#include "capi/json_scanner.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "common/errors.h"

namespace pk::capi {

void JsonScanner::skip_space() {
    while (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r') ++p_;
}

bool JsonScanner::at_end() {
    skip_space();
    return *p_ == '\0';
}

bool JsonScanner::take(char c) {
    skip_space();
    if (*p_ != c) return false;
    ++p_;
    return true;
}

void JsonScanner::expect(char c, const char* what) {
    if (!take(c)) fail(std::string("expected ") + what);
}

char JsonScanner::peek() {
    skip_space();
    return *p_;
}

std::string JsonScanner::string() {
    expect('"', "a quoted string");
    std::string s;
    while (*p_ != '"') {
        if (*p_ == '\0' || *p_ == '\\' || static_cast<unsigned char>(*p_) < 0x20) fail("bad string");
        s += *p_++;
    }
    ++p_;
    return s;
}

double JsonScanner::number() {
    skip_space();
    if (*p_ == '"') fail("expected a number, not a string");
    // JSON has no leading '+', and from_chars takes none either.
    double v = 0.0;
    const char* end = p_ + std::strlen(p_);
    const auto [next, ec] = std::from_chars(p_, end, v, std::chars_format::general);
    if (ec != std::errc() || next == p_ || !std::isfinite(v)) fail("expected a number");
    p_ = next;
    return v;
}

long long JsonScanner::integer(const std::string& key, long long lo, long long hi) {
    const double v = number();
    if (v != std::floor(v) || v < static_cast<double>(lo) || v > static_cast<double>(hi))
        throw InvalidArgument(std::string(what_) + ": " + key + " must be a whole number from " + std::to_string(lo) +
                              " to " + std::to_string(hi) + " (got " + std::to_string(v) + ")");
    return static_cast<long long>(v);
}

bool JsonScanner::boolean() {
    skip_space();
    for (const char* word : {"true", "false"}) {
        const size_t n = std::strlen(word);
        if (std::strncmp(p_, word, n) == 0) {
            p_ += n;
            return word[0] == 't';
        }
    }
    fail("expected true or false");
}

void JsonScanner::fail(const std::string& why) const {
    throw InvalidArgument(std::string(what_) + ": " + why + " at \"" + std::string(p_).substr(0, 20) + "\"");
}

}  // namespace pk::capi
