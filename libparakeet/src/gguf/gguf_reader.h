// GgufReader: reads a GGUF file (versions 2 and 3, little-endian) — its metadata keys and its
// tensor directory — and hands out tensor data as pointers into a read-only memory mapping.
//
// Errors: every problem is reported by throwing pk::GgufError (gguf_types.h) whose message
// starts with the file's name and says what is wrong. Nothing else is thrown except
// std::bad_alloc when the system is out of memory.
//
// Hostile files: open() validates the whole file before it returns — every length and count is
// checked against the bytes that remain before anything is allocated or read, every tensor's
// shape, type, byte size, alignment and extent, and every metadata value (including the
// contents of arrays). After that, no accessor can read outside the file. Specific rules:
//   - version 2 or 3 (their little-endian layouts are identical); other versions are rejected,
//     and a byte-swapped version number is reported as a big-endian file;
//   - keys and tensor names must be unique; a tensor name must not be empty;
//   - `general.alignment`, when present, must be an integer that is a power of two and fits
//     in u32; it defaults to 32;
//   - bool values must be 0 or 1; other bytes are rejected;
//   - arrays may nest up to kMaxArrayDepth levels;
//   - tensors have 0..4 dimensions (0 = a scalar of one element), every dimension ≥ 1, the
//     element count and byte size must fit in 63 bits, the type must be one of ggml_supported_type_names()
//     (others are rejected by name: "type q2_K (10), which is not supported"), a quantised row
//     (ne[0]) must hold whole blocks, the offset must be a multiple of the alignment, and the
//     data must lie inside the file (tensors may overlap).
//
// Thread safety: a reader is immutable after construction; any number of threads may call
// its const members at once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "gguf/gguf_types.h"
#include "gguf/mapped_file.h"

namespace pk {

// One metadata entry as it appears in the file.
struct GgufKeyInfo {
    std::string name;
    GgufValueType type;
    GgufValueType elem_type;  // arrays: the element type; otherwise equal to `type`
    uint64_t count;           // arrays: the number of elements; otherwise 1
};

// One tensor of the file. `ne` is in ggml order: ne[0] is the row length (the fastest-varying
// index), so a PyTorch weight of shape [out, in] has ne = {in, out, 1, 1}.
struct GgufTensor {
    std::string name;
    GgmlType type;
    int n_dims;                  // 0..4 as stored; 0 means a single-element scalar
    std::array<int64_t, 4> ne;   // dimensions past n_dims are 1
    int64_t n_elements;          // product of ne
    size_t n_bytes;              // bytes of data, blocks included
    uint64_t offset;             // from the start of the data section
    const uint8_t* data;         // n_bytes bytes inside the reader's file

    int64_t n_rows() const { return n_elements / ne[0]; }
    size_t row_bytes() const { return n_bytes / static_cast<size_t>(n_rows()); }
    // "[ne0, ne1, ...]" over the stored dimensions, for error messages ("[]" for a scalar).
    std::string shape_string() const;
};

class GgufReader {
public:
    static constexpr uint32_t kDefaultAlignment = 32;
    static constexpr int kMaxDims = 4;
    static constexpr int kMaxArrayDepth = 8;

    // Maps the file at `path` (read-only, MAP_PRIVATE) and validates it. The mapping lives as
    // long as the reader (moves keep it); tensor data pointers are aligned to the file's
    // alignment as long as that is at most the page size.
    static GgufReader open(const std::string& path);

    // Reads a GGUF image that is already in memory, e.g. for fuzzing. The caller keeps the
    // `size` bytes at `data` alive and unchanged for the reader's lifetime; `name` stands for
    // the path in error messages.
    static GgufReader from_buffer(const void* data, size_t size, std::string name);

    GgufReader(GgufReader&&) = default;
    GgufReader& operator=(GgufReader&&) = default;
    GgufReader(const GgufReader&) = delete;
    GgufReader& operator=(const GgufReader&) = delete;

    const std::string& name() const { return name_; }
    uint32_t version() const { return version_; }
    uint32_t alignment() const { return alignment_; }
    size_t file_size() const { return size_; }
    // Offset of the data section from the start of the file.
    uint64_t data_offset() const { return data_offset_; }

    // Lets the OS drop the file pages read so far (see MappedFile::drop_resident_pages); tensor
    // data stays readable. A no-op for from_buffer readers.
    void drop_resident_pages() const {
        if (file_) file_->drop_resident_pages();
    }
    // ... and only those of one tensor's data (MappedFile::drop_pages).
    void drop_pages(const GgufTensor& t) const {
        if (file_) file_->drop_pages(t.data, t.n_bytes);
    }

    // A reader of the part of this file stored under `prefix` (a bundle's component, "asr."):
    // the keys and tensors whose names start with `prefix`, with the prefix removed, in file
    // order; everything else is left out. It shares this reader's mapping (no copy; the view
    // keeps it alive) and its alignment. `name` stands for the file in the view's errors.
    // Throws GgufError when nothing in the file starts with `prefix` (gguf_view.cpp).
    GgufReader prefixed_view(const std::string& prefix, std::string name) const;

    // ---- metadata -------------------------------------------------------------------------
    bool has_key(const std::string& key) const { return key_index_.count(key) != 0; }
    const std::vector<GgufKeyInfo>& keys() const { return keys_; }  // in file order
    const GgufKeyInfo* find_key(const std::string& key) const;     // nullptr when absent

    // Typed reads. Each throws GgufError when the key is missing ("key K not found"), has an
    // incompatible type ("key K has type string, expected an integer") or a value the result
    // type cannot hold ("key K = -1 does not fit in u32").
    //   - integer getters accept every integer type (u8 ... i64) and check the range;
    //   - float getters accept f32, f64 and every integer type (f64 → f32 rounds);
    //   - get_bool accepts only bool, get_string only string.
    int64_t get_i64(const std::string& key) const;
    uint64_t get_u64(const std::string& key) const;
    int32_t get_i32(const std::string& key) const;
    uint32_t get_u32(const std::string& key) const;
    double get_f64(const std::string& key) const;
    float get_f32(const std::string& key) const;
    bool get_bool(const std::string& key) const;
    std::string get_string(const std::string& key) const;

    // Arrays, with the same element conversions as the scalar getters ("key K is an array of
    // f32, expected an array of integers"). Nested arrays are validated but not readable here.
    std::vector<std::string> get_string_array(const std::string& key) const;
    std::vector<int64_t> get_i64_array(const std::string& key) const;
    std::vector<float> get_f32_array(const std::string& key) const;

    // ---- tensors --------------------------------------------------------------------------
    const std::vector<GgufTensor>& tensors() const { return tensors_; }  // in file order
    const GgufTensor* find_tensor(const std::string& name) const;       // nullptr when absent
    const GgufTensor& tensor(const std::string& name) const;  // throws "tensor N not found"

    // A GgufError about this file: "<name>: <what>". For callers that find a problem in what
    // the file holds (a missing tensor, a wrong shape): `throw reader.error("...")`.
    GgufError error(const std::string& what) const;

private:
    friend class GgufParser;

    GgufReader() = default;
    // Index into keys_ of `key`, or a "not found" error.
    size_t require_key(const std::string& key) const;
    // Index into keys_ of `key`, which must be an array: `expected` names what the caller
    // wanted ("an array of integers") for the error.
    size_t require_array(const std::string& key, const char* expected) const;

    std::shared_ptr<const MappedFile> file_;  // null for from_buffer; shared by prefixed views
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
    std::string name_;
    uint32_t version_ = 0;
    uint32_t alignment_ = kDefaultAlignment;
    uint64_t data_offset_ = 0;
    std::vector<GgufKeyInfo> keys_;
    // Parallel to keys_: where the value starts in the file (arrays: their first element).
    // open() validated every value, so accessors decode them without further bounds checks.
    std::vector<size_t> value_pos_;
    std::unordered_map<std::string, size_t> key_index_;
    std::vector<GgufTensor> tensors_;
    std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace pk
