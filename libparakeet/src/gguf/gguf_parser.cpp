#include "gguf/gguf_parser.h"

#include <cstring>
#include <limits>

namespace pk {
namespace {

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the GGUF reader loads little-endian fields with memcpy and needs a little-endian host"
#endif

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kLastValueType = static_cast<uint32_t>(GgufValueType::F64);

// Smallest encodings, used to reject counts the remaining bytes cannot hold before anything
// is allocated: a key/value is a key length (8), a type (4) and at least a one-byte value; a
// tensor info is a name length (8), n_dims (4), a type (4) and an offset (8).
constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;
// Smallest encoding of an array element whose size varies: a string is at least its length,
// a nested array at least its element type and count.
constexpr uint64_t kMinStringBytes = 8;
constexpr uint64_t kMinArrayBytes = 4 + 8;

std::string str(uint64_t v) { return std::to_string(v); }

// The first bytes of a file that is not GGUF, quoted if printable, otherwise in hex.
std::string describe_magic(const uint8_t* p) {
    bool printable = true;
    for (int i = 0; i < 4; ++i) printable = printable && p[i] >= 0x20 && p[i] < 0x7f;
    if (printable) return "\"" + std::string(reinterpret_cast<const char*>(p), 4) + "\"";
    static const char kHex[] = "0123456789abcdef";
    std::string s = "bytes";
    for (int i = 0; i < 4; ++i) s += std::string(" ") + kHex[p[i] >> 4] + kHex[p[i] & 15];
    return s;
}

uint32_t byteswap32(uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

void GgufParser::parse(GgufReader& reader) {
    GgufParser p(reader);
    uint64_t tensor_count = 0;
    uint64_t kv_count = 0;
    p.read_header(&tensor_count, &kv_count);
    p.read_key_values(kv_count);
    p.read_alignment();
    p.read_tensor_infos(tensor_count);
    p.place_tensors();
}

void GgufParser::fail(const std::string& what) const { throw r_.error(what); }

void GgufParser::need(uint64_t bytes, const char* what) const {
    if (bytes > remaining()) {
        fail("file is truncated: " + std::string(what) + " of " + context_ + " needs " + str(bytes) +
             " bytes at offset " + str(pos_) + ", but the file ends at " + str(r_.size_));
    }
}

uint32_t GgufParser::read_u32(const char* what) {
    need(4, what);
    uint32_t v;
    std::memcpy(&v, r_.data_ + pos_, 4);
    pos_ += 4;
    return v;
}

uint64_t GgufParser::read_u64(const char* what) {
    need(8, what);
    uint64_t v;
    std::memcpy(&v, r_.data_ + pos_, 8);
    pos_ += 8;
    return v;
}

std::string_view GgufParser::read_string(const char* what) {
    const uint64_t len = read_u64(what);
    if (len > remaining()) {
        fail(std::string(what) + " of " + context_ + " claims " + str(len) + " bytes at offset " +
             str(pos_) + ", but only " + str(remaining()) + " bytes are left in the file");
    }
    std::string_view s(reinterpret_cast<const char*>(r_.data_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
}

void GgufParser::read_header(uint64_t* tensor_count, uint64_t* kv_count) {
    context_ = "the header";
    if (r_.size_ < 4) fail("not a GGUF file: it has only " + str(r_.size_) + " bytes");
    uint32_t magic;
    std::memcpy(&magic, r_.data_, 4);
    if (magic != kMagic) {
        fail("not a GGUF file: it starts with " + describe_magic(r_.data_) + " instead of \"GGUF\"");
    }
    pos_ = 4;
    const uint32_t version = read_u32("the version");
    if (version != 2 && version != 3) {
        const uint32_t swapped = byteswap32(version);
        if (swapped == 2 || swapped == 3) {
            fail("big-endian GGUF files (version " + str(swapped) + ") are not supported");
        }
        fail("unsupported GGUF version " + str(version) + " (this reader reads versions 2 and 3)");
    }
    r_.version_ = version;
    *tensor_count = read_u64("the tensor count");
    *kv_count = read_u64("the key/value count");

    // Both counts must fit in what follows, or a hostile header could make us reserve memory
    // (or loop) in proportion to a number it made up.
    if (*kv_count > remaining() / kMinKeyValueBytes) {
        fail("the header claims " + str(*kv_count) + " key/value pairs, but the " + str(remaining()) +
             " bytes after it cannot hold that many");
    }
    const uint64_t after_kvs = remaining() - *kv_count * kMinKeyValueBytes;
    if (*tensor_count > after_kvs / kMinTensorInfoBytes) {
        fail("the header claims " + str(*tensor_count) + " tensors, but the " + str(remaining()) +
             " bytes after it cannot hold that many besides " + str(*kv_count) + " key/value pairs");
    }
}

void GgufParser::read_key_values(uint64_t kv_count) {
    for (uint64_t i = 0; i < kv_count; ++i) {
        context_ = "key/value #" + str(i);
        const std::string key(read_string("the key"));
        if (key.empty()) fail("key/value #" + str(i) + " has an empty key");
        if (r_.key_index_.count(key) != 0) fail("duplicate key " + key);
        context_ = "key " + key;

        const uint32_t type_id = read_u32("the value type");
        if (type_id > kLastValueType) fail("key " + key + " has unknown value type " + str(type_id));
        GgufKeyInfo info{key, static_cast<GgufValueType>(type_id), static_cast<GgufValueType>(type_id), 1};
        size_t value_pos = pos_;
        if (info.type == GgufValueType::Array) {
            const uint32_t elem_id = read_u32("the array element type");
            info.count = read_u64("the array length");
            value_pos = pos_;
            skip_array(elem_id, info.count, 1);
            info.elem_type = static_cast<GgufValueType>(elem_id);  // checked by skip_array
        } else {
            skip_value(type_id, 0);
        }
        r_.key_index_.emplace(key, r_.keys_.size());
        r_.keys_.push_back(std::move(info));
        r_.value_pos_.push_back(value_pos);
    }
}

void GgufParser::skip_value(uint32_t type_id, int depth) {
    const auto type = static_cast<GgufValueType>(type_id);
    if (type == GgufValueType::String) {
        read_string("a string value");
    } else if (type == GgufValueType::Array) {
        const uint32_t elem_id = read_u32("a nested array's element type");
        const uint64_t count = read_u64("a nested array's length");
        skip_array(elem_id, count, depth + 1);
    } else {
        const size_t size = gguf_value_type_size(type);
        need(size, "the value");
        if (type == GgufValueType::Bool && r_.data_[pos_] > 1) {
            fail(context_ + ": bool value " + str(r_.data_[pos_]) + " is neither 0 nor 1");
        }
        pos_ += size;
    }
}

void GgufParser::skip_array(uint32_t elem_type_id, uint64_t count, int depth) {
    if (depth > GgufReader::kMaxArrayDepth) {
        fail(context_ + ": arrays nest deeper than " + str(GgufReader::kMaxArrayDepth) + " levels");
    }
    if (elem_type_id > kLastValueType) {
        fail(context_ + ": array has unknown element type " + str(elem_type_id));
    }
    const auto elem = static_cast<GgufValueType>(elem_type_id);
    const size_t fixed = gguf_value_type_size(elem);
    const uint64_t min_size = fixed != 0 ? fixed
                              : elem == GgufValueType::String ? kMinStringBytes
                                                               : kMinArrayBytes;
    if (count > remaining() / min_size) {
        fail(context_ + ": array of " + str(count) + " " + gguf_value_type_name(elem) +
             " values cannot fit in the " + str(remaining()) + " bytes left in the file");
    }
    if (fixed != 0 && elem != GgufValueType::Bool) {
        pos_ += static_cast<size_t>(count * fixed);
        return;
    }
    for (uint64_t i = 0; i < count; ++i) skip_value(elem_type_id, depth);
}

void GgufParser::read_alignment() {
    const char* const key = "general.alignment";
    if (!r_.has_key(key)) return;
    const uint32_t alignment = r_.get_u32(key);
    if (!is_power_of_two(alignment)) {
        fail(std::string(key) + " = " + str(alignment) + " is not a power of two");
    }
    r_.alignment_ = alignment;
}

void GgufParser::read_tensor_infos(uint64_t tensor_count) {
    for (uint64_t i = 0; i < tensor_count; ++i) read_tensor_info(i);
}

void GgufParser::read_tensor_info(uint64_t index) {
    context_ = "tensor info #" + str(index);
    GgufTensor t;
    t.name = std::string(read_string("the name"));
    if (t.name.empty()) fail("tensor #" + str(index) + " has an empty name");
    if (r_.tensor_index_.count(t.name) != 0) fail("duplicate tensor name " + t.name);
    context_ = "tensor " + t.name;
    const std::string& name = t.name;

    const uint32_t n_dims = read_u32("the dimension count");
    if (n_dims > GgufReader::kMaxDims) {
        fail("tensor " + name + " has " + str(n_dims) + " dimensions (at most " +
             str(GgufReader::kMaxDims) + " are supported)");
    }
    t.n_dims = static_cast<int>(n_dims);
    t.ne = {1, 1, 1, 1};
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
        const uint64_t ne = read_u64("a dimension");
        if (ne == 0) fail("tensor " + name + ": dimension " + str(d) + " is 0");
        if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
            __builtin_mul_overflow(n_elements, ne, &n_elements) ||
            n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            fail("tensor " + name + ": the element count overflows 64 bits (dimension " + str(d) +
                 " is " + str(ne) + ")");
        }
        t.ne[d] = static_cast<int64_t>(ne);
    }
    t.n_elements = static_cast<int64_t>(n_elements);

    const uint32_t type_id = read_u32("the type");
    if (!ggml_type_supported(type_id)) {
        const char* type_name = ggml_type_name(type_id);
        if (type_name == nullptr) fail("tensor " + name + " has unknown ggml type " + str(type_id));
        fail("tensor " + name + " has type " + type_name + " (" + str(type_id) +
             "), which is not supported (supported: " + ggml_supported_type_names() + ")");
    }
    t.type = static_cast<GgmlType>(type_id);
    const GgmlTypeLayout layout = ggml_type_layout(t.type);
    if (t.ne[0] % layout.block_elems != 0) {
        fail("tensor " + name + ": row length " + str(t.ne[0]) + " is not a multiple of the " +
             ggml_type_name(type_id) + " block size " + str(layout.block_elems));
    }
    uint64_t n_bytes = 0;
    if (__builtin_mul_overflow(n_elements / layout.block_elems, layout.block_bytes, &n_bytes) ||
        n_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        n_bytes > std::numeric_limits<size_t>::max()) {
        fail("tensor " + name + ": the byte size of shape " + t.shape_string() + " overflows");
    }
    t.n_bytes = static_cast<size_t>(n_bytes);

    t.offset = read_u64("the data offset");
    if (t.offset % r_.alignment_ != 0) {
        fail("tensor " + name + ": data offset " + str(t.offset) + " is not a multiple of the alignment " +
             str(r_.alignment_));
    }
    t.data = nullptr;  // set by place_tensors once the data section is known
    r_.tensor_index_.emplace(t.name, r_.tensors_.size());
    r_.tensors_.push_back(std::move(t));
}

void GgufParser::place_tensors() {
    // The data section starts at the first aligned offset after the tensor infos. pos_ is at
    // most the file size and the alignment at most 2^31, so this cannot overflow.
    const uint64_t a = r_.alignment_;
    r_.data_offset_ = (static_cast<uint64_t>(pos_) + a - 1) / a * a;
    if (r_.tensors_.empty()) return;
    if (r_.data_offset_ > r_.size_) {
        fail("the data section would start at offset " + str(r_.data_offset_) +
             ", past the end of the file (" + str(r_.size_) + " bytes)");
    }
    const uint64_t available = r_.size_ - r_.data_offset_;
    for (GgufTensor& t : r_.tensors_) {
        if (t.offset > available || t.n_bytes > available - t.offset) {
            fail("tensor " + t.name + ": its " + str(t.n_bytes) + " bytes at data offset " + str(t.offset) +
                 " run past the end of the file (the data section holds " + str(available) + " bytes)");
        }
        t.data = r_.data_ + r_.data_offset_ + t.offset;
    }
}

}  // namespace pk
