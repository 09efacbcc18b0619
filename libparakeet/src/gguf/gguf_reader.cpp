#include "gguf/gguf_reader.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "gguf/gguf_parser.h"

namespace pk {
namespace {

template <class T>
T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// An integer value of any GGUF integer type, kept exactly.
struct Integer {
    bool negative;
    uint64_t magnitude;  // |value|

    std::string text() const { return (negative ? "-" : "") + std::to_string(magnitude); }

    // The value as T, or false when T cannot hold it.
    template <class T>
    bool to(T* out) const {
        using L = std::numeric_limits<T>;
        if (negative) {
            if constexpr (L::is_signed) {
                const uint64_t min_magnitude = static_cast<uint64_t>(L::max()) + 1;  // |L::min()|
                if (magnitude > min_magnitude) return false;
                *out = magnitude == min_magnitude ? L::min()
                                                  : static_cast<T>(-static_cast<int64_t>(magnitude));
                return true;
            } else {
                return false;
            }
        }
        if (magnitude > static_cast<uint64_t>(L::max())) return false;
        *out = static_cast<T>(magnitude);
        return true;
    }
};

Integer load_integer(const uint8_t* p, GgufValueType t) {
    auto from_signed = [](int64_t v) {
        // -(v + 1) + 1 is |v| without overflowing at INT64_MIN.
        return v < 0 ? Integer{true, static_cast<uint64_t>(-(v + 1)) + 1}
                     : Integer{false, static_cast<uint64_t>(v)};
    };
    switch (t) {
        case GgufValueType::U8: return {false, load<uint8_t>(p)};
        case GgufValueType::I8: return from_signed(load<int8_t>(p));
        case GgufValueType::U16: return {false, load<uint16_t>(p)};
        case GgufValueType::I16: return from_signed(load<int16_t>(p));
        case GgufValueType::U32: return {false, load<uint32_t>(p)};
        case GgufValueType::I32: return from_signed(load<int32_t>(p));
        case GgufValueType::U64: return {false, load<uint64_t>(p)};
        case GgufValueType::I64: return from_signed(load<int64_t>(p));
        default: return {false, 0};  // callers check gguf_value_type_is_integer first
    }
}

bool is_number(GgufValueType t) { return gguf_value_type_is_integer(t) || gguf_value_type_is_float(t); }

// Any integer or float value as a double (integers above 2^53 round).
double load_number(const uint8_t* p, GgufValueType t) {
    if (t == GgufValueType::F32) return load<float>(p);
    if (t == GgufValueType::F64) return load<double>(p);
    const Integer v = load_integer(p, t);
    const double m = static_cast<double>(v.magnitude);
    return v.negative ? -m : m;
}

// "string", "array of f32".
std::string describe(const GgufKeyInfo& k) {
    std::string s = gguf_value_type_name(k.type);
    if (k.type == GgufValueType::Array) s += std::string(" of ") + gguf_value_type_name(k.elem_type);
    return s;
}

}  // namespace

std::string GgufTensor::shape_string() const {
    std::string s = "[";
    for (int d = 0; d < n_dims; ++d) s += (d ? ", " : "") + std::to_string(ne[d]);
    return s + "]";
}

GgufReader GgufReader::open(const std::string& path) {
    GgufReader r;
    try {
        r.file_ = std::make_shared<const MappedFile>(path);
    } catch (const std::runtime_error& e) {
        throw GgufError(e.what());
    }
    r.data_ = r.file_->data();
    r.size_ = r.file_->size();
    r.name_ = path;
    GgufParser::parse(r);
    return r;
}

GgufReader GgufReader::from_buffer(const void* data, size_t size, std::string name) {
    GgufReader r;
    r.data_ = static_cast<const uint8_t*>(data);
    r.size_ = size;
    r.name_ = std::move(name);
    GgufParser::parse(r);
    return r;
}

GgufError GgufReader::error(const std::string& what) const { return GgufError(name_ + ": " + what); }

// ---- metadata ---------------------------------------------------------------------------

const GgufKeyInfo* GgufReader::find_key(const std::string& key) const {
    auto it = key_index_.find(key);
    return it == key_index_.end() ? nullptr : &keys_[it->second];
}

size_t GgufReader::require_key(const std::string& key) const {
    auto it = key_index_.find(key);
    if (it == key_index_.end()) throw error("key " + key + " not found");
    return it->second;
}

size_t GgufReader::require_array(const std::string& key, const char* expected) const {
    const size_t i = require_key(key);
    if (keys_[i].type != GgufValueType::Array) {
        throw error("key " + key + " has type " + describe(keys_[i]) + ", expected " + expected);
    }
    return i;
}

namespace {

// Shared body of the integer getters.
template <class T>
T get_integer(const GgufReader& r, const GgufKeyInfo& k, const uint8_t* p, const char* result_name) {
    if (!gguf_value_type_is_integer(k.type)) {
        throw r.error("key " + k.name + " has type " + describe(k) + ", expected an integer");
    }
    const Integer v = load_integer(p, k.type);
    T out;
    if (!v.to(&out)) throw r.error("key " + k.name + " = " + v.text() + " does not fit in " + result_name);
    return out;
}

}  // namespace

int64_t GgufReader::get_i64(const std::string& key) const {
    const size_t i = require_key(key);
    return get_integer<int64_t>(*this, keys_[i], data_ + value_pos_[i], "i64");
}

uint64_t GgufReader::get_u64(const std::string& key) const {
    const size_t i = require_key(key);
    return get_integer<uint64_t>(*this, keys_[i], data_ + value_pos_[i], "u64");
}

int32_t GgufReader::get_i32(const std::string& key) const {
    const size_t i = require_key(key);
    return get_integer<int32_t>(*this, keys_[i], data_ + value_pos_[i], "i32");
}

uint32_t GgufReader::get_u32(const std::string& key) const {
    const size_t i = require_key(key);
    return get_integer<uint32_t>(*this, keys_[i], data_ + value_pos_[i], "u32");
}

double GgufReader::get_f64(const std::string& key) const {
    const size_t i = require_key(key);
    if (!is_number(keys_[i].type)) {
        throw error("key " + key + " has type " + describe(keys_[i]) + ", expected a number");
    }
    return load_number(data_ + value_pos_[i], keys_[i].type);
}

float GgufReader::get_f32(const std::string& key) const {
    const double v = get_f64(key);
    if (std::isfinite(v) && std::fabs(v) > FLT_MAX) {
        throw error("key " + key + " = " + std::to_string(v) + " does not fit in f32");
    }
    return static_cast<float>(v);
}

bool GgufReader::get_bool(const std::string& key) const {
    const size_t i = require_key(key);
    if (keys_[i].type != GgufValueType::Bool) {
        throw error("key " + key + " has type " + describe(keys_[i]) + ", expected bool");
    }
    return data_[value_pos_[i]] != 0;
}

std::string GgufReader::get_string(const std::string& key) const {
    const size_t i = require_key(key);
    if (keys_[i].type != GgufValueType::String) {
        throw error("key " + key + " has type " + describe(keys_[i]) + ", expected string");
    }
    const uint8_t* p = data_ + value_pos_[i];
    return std::string(reinterpret_cast<const char*>(p + 8), static_cast<size_t>(load<uint64_t>(p)));
}

std::vector<std::string> GgufReader::get_string_array(const std::string& key) const {
    const size_t i = require_array(key, "an array of strings");
    const GgufKeyInfo& k = keys_[i];
    if (k.elem_type != GgufValueType::String) {
        throw error("key " + key + " is an array of " + gguf_value_type_name(k.elem_type) +
                    ", expected an array of strings");
    }
    std::vector<std::string> out;
    out.reserve(static_cast<size_t>(k.count));  // open() checked that the file holds them
    const uint8_t* p = data_ + value_pos_[i];
    for (uint64_t e = 0; e < k.count; ++e) {
        const size_t len = static_cast<size_t>(load<uint64_t>(p));
        out.emplace_back(reinterpret_cast<const char*>(p + 8), len);
        p += 8 + len;
    }
    return out;
}

std::vector<int64_t> GgufReader::get_i64_array(const std::string& key) const {
    const size_t i = require_array(key, "an array of integers");
    const GgufKeyInfo& k = keys_[i];
    if (!gguf_value_type_is_integer(k.elem_type)) {
        throw error("key " + key + " is an array of " + gguf_value_type_name(k.elem_type) +
                    ", expected an array of integers");
    }
    const size_t size = gguf_value_type_size(k.elem_type);
    std::vector<int64_t> out(static_cast<size_t>(k.count));
    const uint8_t* p = data_ + value_pos_[i];
    for (size_t e = 0; e < out.size(); ++e) {
        const Integer v = load_integer(p + e * size, k.elem_type);
        if (!v.to(&out[e])) {
            throw error("key " + key + "[" + std::to_string(e) + "] = " + v.text() + " does not fit in i64");
        }
    }
    return out;
}

std::vector<float> GgufReader::get_f32_array(const std::string& key) const {
    const size_t i = require_array(key, "an array of numbers");
    const GgufKeyInfo& k = keys_[i];
    if (!is_number(k.elem_type)) {
        throw error("key " + key + " is an array of " + gguf_value_type_name(k.elem_type) +
                    ", expected an array of numbers");
    }
    const size_t size = gguf_value_type_size(k.elem_type);
    std::vector<float> out(static_cast<size_t>(k.count));
    const uint8_t* p = data_ + value_pos_[i];
    for (size_t e = 0; e < out.size(); ++e) {
        const double v = load_number(p + e * size, k.elem_type);
        if (std::isfinite(v) && std::fabs(v) > FLT_MAX) {
            throw error("key " + key + "[" + std::to_string(e) + "] = " + std::to_string(v) +
                        " does not fit in f32");
        }
        out[e] = static_cast<float>(v);
    }
    return out;
}

// ---- tensors ----------------------------------------------------------------------------

const GgufTensor* GgufReader::find_tensor(const std::string& name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensor& GgufReader::tensor(const std::string& name) const {
    const GgufTensor* t = find_tensor(name);
    if (t == nullptr) throw error("tensor " + name + " not found");
    return *t;
}

}  // namespace pk
