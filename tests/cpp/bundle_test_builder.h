// Bundles for the tests, built from the committed fixture models: every key and tensor of a
// source file copied under "<name>." through GgufReader's getters and written by GgufBuilder,
// an implementation independent of the Python writer (parakeet_py/convert/bundle_write.py).
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf_test_builder.h"

namespace bundle_test {

// The bundle's own header keys for components `names`.
inline void add_header(gguf_test::GgufBuilder& b, const std::vector<std::string>& names, uint32_t version = 1) {
    b.kv_string("general.architecture", "parakeet-bundle");
    b.kv_u32("parakeet.bundle.version", version);
    b.kv_string_array("parakeet.bundle.components", names);
}

// The per-component keys the format requires (the hashes are optional and left out).
inline void add_component_keys(gguf_test::GgufBuilder& b, const std::string& name, const std::string& kind) {
    b.kv_string("parakeet.bundle." + name + ".kind", kind);
    for (const char* field : {"license", "license_url", "source", "attribution", "changes"})
        b.kv_string("parakeet.bundle." + name + "." + field, std::string(field) + " of " + name);
}

// Copies one key of `src` under `prefix`, keeping its value type. The fixture models hold
// strings, integers, floats, bools and arrays of strings, integers and floats.
inline void copy_key(gguf_test::GgufBuilder& b, const pk::GgufReader& src, const pk::GgufKeyInfo& k,
                     const std::string& prefix) {
    using T = pk::GgufValueType;
    const std::string key = prefix + k.name;
    const uint32_t type = static_cast<uint32_t>(k.type), elem = static_cast<uint32_t>(k.elem_type);
    gguf_test::Bytes payload;
    if (k.type == T::String) {
        payload.str(src.get_string(k.name));
    } else if (k.type == T::Bool) {
        payload.u8(src.get_bool(k.name));
    } else if (k.type == T::F32) {
        payload.put(src.get_f32(k.name));
    } else if (k.type == T::F64) {
        payload.put(src.get_f64(k.name));
    } else if (pk::gguf_value_type_is_integer(k.type)) {
        const uint64_t v = static_cast<uint64_t>(src.get_i64(k.name));
        payload.b.insert(payload.b.end(), reinterpret_cast<const uint8_t*>(&v),
                         reinterpret_cast<const uint8_t*>(&v) + pk::gguf_value_type_size(k.type));
    } else if (k.elem_type == T::String) {
        payload.u32(elem).u64(k.count);
        for (const std::string& s : src.get_string_array(k.name)) payload.str(s);
    } else if (k.elem_type == T::F32) {
        payload.u32(elem).u64(k.count);
        for (float v : src.get_f32_array(k.name)) payload.put(v);
    } else if (pk::gguf_value_type_is_integer(k.elem_type)) {
        payload.u32(elem).u64(k.count);
        for (int64_t v : src.get_i64_array(k.name))
            payload.b.insert(payload.b.end(), reinterpret_cast<const uint8_t*>(&v),
                             reinterpret_cast<const uint8_t*>(&v) + pk::gguf_value_type_size(k.elem_type));
    } else {
        throw std::runtime_error("bundle_test: cannot copy key " + k.name);
    }
    b.kv_raw(key, type, payload.b);
}

// Every key (but general.alignment, which a bundle drops) and tensor of the file at `path`
// under "<name>.", and the component's keys.
inline void add_component(gguf_test::GgufBuilder& b, const std::string& path, const std::string& name,
                          const std::string& kind) {
    const pk::GgufReader src = pk::GgufReader::open(path);
    for (const pk::GgufKeyInfo& k : src.keys())
        if (k.name != "general.alignment") copy_key(b, src, k, name + ".");
    for (const pk::GgufTensor& t : src.tensors()) {
        gguf_test::TensorSpec s;
        s.name = name + "." + t.name;
        s.type = static_cast<uint32_t>(t.type);
        for (int d = 0; d < t.n_dims; ++d) s.ne.push_back(static_cast<uint64_t>(t.ne[d]));
        s.data.assign(t.data, t.data + t.n_bytes);
        b.tensor(std::move(s));
    }
    add_component_keys(b, name, kind);
}

// Writes the built file to `path` and returns the path.
inline std::string write(const gguf_test::GgufBuilder& b, const std::string& path) {
    const std::vector<uint8_t> bytes = b.build();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return path;
}

}  // namespace bundle_test
