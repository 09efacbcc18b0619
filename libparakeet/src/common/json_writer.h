// JsonWriter: a minimal streaming JSON writer for the C ABI's result documents. Numbers are
// formatted with std::to_chars, so the output does not depend on the process locale (a host
// application that sets LC_NUMERIC to a comma locale still gets valid JSON). Strings are
// escaped per RFC 8259; non-finite numbers are written as null.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pk {

class JsonWriter {
public:
    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    // Object member name; the value follows with one of the value calls.
    JsonWriter& key(const char* name);

    JsonWriter& value(const std::string& s);
    JsonWriter& value(const char* s);
    JsonWriter& value(int64_t v);
    JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
    JsonWriter& value(bool v);
    // A number with `decimals` digits after the point (fixed notation).
    JsonWriter& value(double v, int decimals);
    // A float in its shortest form that reads back to the same bits (for probabilities that
    // callers compare exactly).
    JsonWriter& exact(float v);
    // A value that is already a JSON document (another writer's str()), nested as it is.
    JsonWriter& document(const std::string& json);

    const std::string& str() const { return out_; }

private:
    void before_value();
    void write_string(const char* s);

    std::string out_;
    // Per open container: true once it holds an element (a comma goes before the next one).
    std::vector<bool> has_element_;
    bool after_key_ = false;
};

}  // namespace pk
