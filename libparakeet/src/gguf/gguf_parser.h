// GgufParser: the validating pass that GgufReader runs once over a file image. Internal to the
// reader; everything it finds goes into the reader's fields, every problem becomes a GgufError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gguf/gguf_reader.h"

namespace pk {

class GgufParser {
public:
    // Fills `reader` (whose data_, size_ and name_ are set) from its bytes.
    static void parse(GgufReader& reader);

private:
    explicit GgufParser(GgufReader& reader) : r_(reader) {}

    void read_header(uint64_t* tensor_count, uint64_t* kv_count);
    void read_key_values(uint64_t kv_count);
    void read_alignment();
    void read_tensor_infos(uint64_t tensor_count);
    void read_tensor_info(uint64_t index);
    void place_tensors();

    // Skips (after checking) one value of type `t` / `count` array elements of type `elem`.
    void skip_value(uint32_t type_id, int depth);
    void skip_array(uint32_t elem_type_id, uint64_t count, int depth);

    // Bounds-checked reads at pos_; `what` names the field for the truncation error.
    void need(uint64_t bytes, const char* what) const;
    uint32_t read_u32(const char* what);
    uint64_t read_u64(const char* what);
    std::string_view read_string(const char* what);
    size_t remaining() const { return r_.size_ - pos_; }

    [[noreturn]] void fail(const std::string& what) const;

    GgufReader& r_;
    size_t pos_ = 0;
    // What is being read ("key general.name", "tensor info #3"), for truncation errors.
    std::string context_;
};

}  // namespace pk
