// GgufBuilder: writes GGUF images byte by byte for the reader's tests — valid ones, and, through
// its overrides, the broken ones a hostile or damaged file would contain. Independent of the
// reader's code on purpose: the tests compare two implementations of the format.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace gguf_test {

// Little-endian byte sink.
struct Bytes {
    std::vector<uint8_t> b;

    template <class T>
    Bytes& put(T v) {
        uint8_t raw[sizeof(T)];
        std::memcpy(raw, &v, sizeof(T));
        b.insert(b.end(), raw, raw + sizeof(T));
        return *this;
    }
    Bytes& u8(uint8_t v) { return put(v); }
    Bytes& u32(uint32_t v) { return put(v); }
    Bytes& u64(uint64_t v) { return put(v); }
    Bytes& str(const std::string& s) {
        u64(s.size());
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Bytes& raw(const std::vector<uint8_t>& v) {
        b.insert(b.end(), v.begin(), v.end());
        return *this;
    }
};

// GGUF metadata value type ids and ggml tensor type ids, spelled out here rather than taken
// from the reader so that a wrong id in the reader shows up as a test failure.
enum : uint32_t {
    kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
    kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};
enum : uint32_t { kTypeF32 = 0, kTypeF16 = 1, kTypeQ8_0 = 8, kTypeQ2_K = 10, kTypeQ4_K = 12 };

struct TensorSpec {
    std::string name;
    uint32_t type = kTypeF32;
    std::vector<uint64_t> ne;
    std::vector<uint8_t> data;
    std::optional<uint64_t> offset;   // default: laid out after the previous tensor, aligned
    std::optional<uint32_t> n_dims;   // default: ne.size()
};

class GgufBuilder {
public:
    GgufBuilder& version(uint32_t v) { version_ = v; return *this; }
    GgufBuilder& magic(uint32_t m) { magic_ = m; return *this; }
    // Counts written in the header instead of the real ones.
    GgufBuilder& tensor_count(uint64_t n) { tensor_count_ = n; return *this; }
    GgufBuilder& kv_count(uint64_t n) { kv_count_ = n; return *this; }
    // Alignment used to lay out the data section (it does not write general.alignment).
    GgufBuilder& layout_alignment(uint64_t a) { alignment_ = a; return *this; }

    // A key with a value already encoded (type id + payload, no checks).
    GgufBuilder& kv_raw(const std::string& key, uint32_t type, const std::vector<uint8_t>& payload) {
        kvs_.str(key).u32(type).raw(payload);
        ++n_kvs_;
        return *this;
    }
    template <class T>
    GgufBuilder& kv(const std::string& key, uint32_t type, T value) {
        return kv_raw(key, type, Bytes().put(value).b);
    }
    GgufBuilder& kv_u32(const std::string& key, uint32_t v) { return kv(key, kU32, v); }
    GgufBuilder& kv_i32(const std::string& key, int32_t v) { return kv(key, kI32, v); }
    GgufBuilder& kv_f32(const std::string& key, float v) { return kv(key, kF32, v); }
    GgufBuilder& kv_bool(const std::string& key, bool v) { return kv(key, kBool, uint8_t(v ? 1 : 0)); }
    GgufBuilder& kv_string(const std::string& key, const std::string& v) {
        return kv_raw(key, kString, Bytes().str(v).b);
    }
    // general.alignment as u32, also used for the layout.
    GgufBuilder& alignment(uint32_t a) {
        alignment_ = a;
        return kv_u32("general.alignment", a);
    }
    template <class T>
    GgufBuilder& kv_array(const std::string& key, uint32_t elem_type, const std::vector<T>& values) {
        Bytes p;
        p.u32(elem_type).u64(values.size());
        for (const T& v : values) p.put(v);
        return kv_raw(key, kArray, p.b);
    }
    GgufBuilder& kv_string_array(const std::string& key, const std::vector<std::string>& values) {
        Bytes p;
        p.u32(kString).u64(values.size());
        for (const std::string& v : values) p.str(v);
        return kv_raw(key, kArray, p.b);
    }

    GgufBuilder& tensor(TensorSpec spec) {
        tensors_.push_back(std::move(spec));
        return *this;
    }
    GgufBuilder& tensor(const std::string& name, uint32_t type, std::vector<uint64_t> ne,
                        std::vector<uint8_t> data) {
        TensorSpec s;
        s.name = name;
        s.type = type;
        s.ne = std::move(ne);
        s.data = std::move(data);
        return tensor(std::move(s));
    }
    // An F32 tensor holding `values` as they are in memory.
    GgufBuilder& tensor_f32(const std::string& name, std::vector<uint64_t> ne, const std::vector<float>& values) {
        std::vector<uint8_t> data(values.size() * sizeof(float));
        std::memcpy(data.data(), values.data(), data.size());
        return tensor(name, kTypeF32, std::move(ne), std::move(data));
    }

    std::vector<uint8_t> build() const {
        Bytes out;
        out.u32(magic_).u32(version_);
        out.u64(tensor_count_ ? *tensor_count_ : tensors_.size());
        out.u64(kv_count_ ? *kv_count_ : n_kvs_);
        out.raw(kvs_.b);

        std::vector<uint64_t> offsets;
        uint64_t next = 0;
        for (const TensorSpec& t : tensors_) {
            const uint64_t off = t.offset ? *t.offset : next;
            offsets.push_back(off);
            next = round_up(std::max(next, off + t.data.size()));
            out.str(t.name).u32(t.n_dims ? *t.n_dims : static_cast<uint32_t>(t.ne.size()));
            for (uint64_t d : t.ne) out.u64(d);
            out.u32(t.type).u64(off);
        }
        if (tensors_.empty()) return out.b;

        out.b.resize(round_up(out.b.size()), 0);
        const size_t data_start = out.b.size();
        for (size_t i = 0; i < tensors_.size(); ++i) {
            const std::vector<uint8_t>& d = tensors_[i].data;
            if (d.empty()) continue;
            const size_t at = data_start + offsets[i];
            if (out.b.size() < at + d.size()) out.b.resize(at + d.size(), 0);
            std::memcpy(out.b.data() + at, d.data(), d.size());
        }
        return out.b;
    }

private:
    uint64_t round_up(uint64_t n) const {
        const uint64_t a = alignment_ == 0 ? 1 : alignment_;
        return (n + a - 1) / a * a;
    }

    uint32_t magic_ = 0x46554747;
    uint32_t version_ = 3;
    std::optional<uint64_t> tensor_count_, kv_count_;
    uint64_t alignment_ = 32;
    Bytes kvs_;
    uint64_t n_kvs_ = 0;
    std::vector<TensorSpec> tensors_;
};

}  // namespace gguf_test
