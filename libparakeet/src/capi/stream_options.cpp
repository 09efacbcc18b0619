#include "capi/stream_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "capi/decoder_number.h"
#include "common/errors.h"

namespace pk::capi {
namespace {

class Scanner {
public:
    explicit Scanner(const char* s) : p_(s) {}

    void skip_space() {
        while (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r') ++p_;
    }
    bool at_end() {
        skip_space();
        return *p_ == '\0';
    }
    bool take(char c) {
        skip_space();
        if (*p_ != c) return false;
        ++p_;
        return true;
    }
    void expect(char c, const char* what) {
        if (!take(c)) fail(std::string("expected ") + what);
    }
    std::string key() {
        expect('"', "a quoted key");
        std::string k;
        while (*p_ != '"') {
            if (*p_ == '\0' || *p_ == '\\' || static_cast<unsigned char>(*p_) < 0x20) fail("bad key");
            k += *p_++;
        }
        ++p_;
        return k;
    }
    double number() {
        skip_space();
        if (*p_ == '"') fail("expected a number, not a string");
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(p_, &end);
        if (end == p_ || errno == ERANGE || !std::isfinite(v)) fail("expected a number");
        p_ = end;
        return v;
    }
    [[noreturn]] void fail(const std::string& why) const {
        throw InvalidInput("stream options: " + why + " at \"" + std::string(p_).substr(0, 20) + "\"");
    }

private:
    const char* p_;
};

}  // namespace

StreamSettings parse_stream_options(const char* json) {
    StreamSettings s;
    if (json == nullptr) return s;
    Scanner in(json);
    if (in.at_end()) return s;
    in.expect('{', "a JSON object");
    if (!in.take('}')) {
        do {
            const std::string k = in.key();
            in.expect(':', "':'");
            const double v = in.number();
            if (k == "chunk_sec") {
                s.chunk_sec = v;
            } else if (k == "left_sec") {
                s.left_sec = v;
            } else if (k == "right_sec") {
                s.right_sec = v;
            } else if (k == "decoder") {
                if (v != std::floor(v) || std::fabs(v) > 1e6)
                    throw InvalidInput("stream options: decoder must be an integer (got " + std::to_string(v) + ")");
                s.decoder = decoder_from_int(static_cast<int>(v));
            } else {
                throw InvalidInput("stream options: unknown key \"" + k +
                                   "\" (known: chunk_sec, left_sec, right_sec, decoder)");
            }
        } while (in.take(','));
        in.expect('}', "',' or '}'");
    }
    if (!in.at_end()) in.fail("unexpected text after the object");
    return s;
}

}  // namespace pk::capi
