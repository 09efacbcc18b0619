#include "common/json_writer.h"

#include <charconv>
#include <cmath>

namespace pk {

void JsonWriter::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!has_element_.empty()) {
        if (has_element_.back()) out_ += ',';
        has_element_.back() = true;
    }
}

JsonWriter& JsonWriter::begin_object() {
    before_value();
    out_ += '{';
    has_element_.push_back(false);
    return *this;
}

JsonWriter& JsonWriter::end_object() {
    out_ += '}';
    has_element_.pop_back();
    return *this;
}

JsonWriter& JsonWriter::begin_array() {
    before_value();
    out_ += '[';
    has_element_.push_back(false);
    return *this;
}

JsonWriter& JsonWriter::end_array() {
    out_ += ']';
    has_element_.pop_back();
    return *this;
}

JsonWriter& JsonWriter::key(const char* name) {
    before_value();
    write_string(name);
    out_ += ':';
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::value(const char* s) {
    before_value();
    write_string(s);
    return *this;
}

void JsonWriter::write_string(const char* s) {
    out_ += '"';
    for (const char* p = s; *p; ++p) {
        const unsigned char c = static_cast<unsigned char>(*p);
        switch (c) {
            case '"': out_ += "\\\""; break;
            case '\\': out_ += "\\\\"; break;
            case '\b': out_ += "\\b"; break;
            case '\f': out_ += "\\f"; break;
            case '\n': out_ += "\\n"; break;
            case '\r': out_ += "\\r"; break;
            case '\t': out_ += "\\t"; break;
            default:
                if (c < 0x20) {
                    static const char* hex = "0123456789abcdef";
                    out_ += "\\u00";
                    out_ += hex[c >> 4];
                    out_ += hex[c & 15];
                } else {
                    out_ += static_cast<char>(c);
                }
        }
    }
    out_ += '"';
}

JsonWriter& JsonWriter::value(const std::string& s) { return value(s.c_str()); }

JsonWriter& JsonWriter::value(int64_t v) {
    before_value();
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, r.ptr);
    return *this;
}

JsonWriter& JsonWriter::value(bool v) {
    before_value();
    out_ += v ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::document(const std::string& json) {
    before_value();
    out_ += json;
    return *this;
}

JsonWriter& JsonWriter::exact(float v) {
    before_value();
    if (!std::isfinite(v)) {
        out_ += "null";
        return *this;
    }
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, r.ptr);
    return *this;
}

JsonWriter& JsonWriter::value(double v, int decimals) {
    before_value();
    if (!std::isfinite(v)) {
        out_ += "null";
        return *this;
    }
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, decimals);
    if (r.ec != std::errc()) {
        out_ += "null";  // |v| too large for the buffer: not a time or a confidence
        return *this;
    }
    out_.append(buf, r.ptr);
    return *this;
}

}  // namespace pk
