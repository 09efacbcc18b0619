// A strict reader for the small, flat JSON option documents of the C ABI (stream_begin_with,
// load_with): objects of keys to numbers, booleans, strings and short arrays. Numbers are read
// without the C locale (std::from_chars), so "2.5" means 2.5 under any LC_NUMERIC. Anything
// malformed throws InvalidArgument naming the document and where it went wrong.
#pragma once

#include <string>

namespace pk::capi {

class JsonScanner {
public:
    // `what` names the document in messages ("stream options").
    JsonScanner(const char* text, const char* what) : p_(text), what_(what) {}

    // Whether only white space is left.
    bool at_end();
    // Consumes `c` (after white space) if it is next.
    bool take(char c);
    // Consumes `c` or fails with "expected <what>".
    void expect(char c, const char* what);
    // The next value's first character (after white space), without consuming it.
    char peek();

    // A quoted key or string without escapes (keys and option values need none).
    std::string string();
    // A finite number.
    double number();
    // A whole number in [lo, hi].
    long long integer(const std::string& key, long long lo, long long hi);
    // true or false.
    bool boolean();

    // Calls `on_key(key)` for each key of an object (which must read the key's value), from
    // '{' to '}'; an empty document (white space only) has no keys. Then requires the end.
    template <class OnKey>
    void object(OnKey&& on_key) {
        if (at_end()) return;
        expect('{', "a JSON object");
        if (!take('}')) {
            do {
                const std::string k = string();
                expect(':', "':'");
                on_key(k);
            } while (take(','));
            expect('}', "',' or '}'");
        }
        if (!at_end()) fail("unexpected text after the object");
    }

    [[noreturn]] void fail(const std::string& why) const;

private:
    void skip_space();

    const char* p_;
    const char* what_;
};

}  // namespace pk::capi
