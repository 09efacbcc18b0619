// GGUF vocabulary: the error type of the GGUF code, the metadata value types, and the ggml
// tensor types this engine knows (by id and by the name ggml gives them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/errors.h"

namespace pk {

// Every failure to read a GGUF file or one of its values. what() always starts with the
// file's name (its path, or the name given to GgufReader::from_buffer) followed by ": " and
// says what is wrong, e.g. "model.gguf: key general.alignment has type string, expected an
// integer". It is a ModelError: to the C ABI, a problem of the model file.
class GgufError : public ModelError {
public:
    using ModelError::ModelError;
};

// Type of a metadata value, as stored in the file (u32).
enum class GgufValueType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};

// "u8", "i32", "string", "array", ... or nullptr for an id outside the spec.
const char* gguf_value_type_name(uint32_t type_id);
inline const char* gguf_value_type_name(GgufValueType t) {
    return gguf_value_type_name(static_cast<uint32_t>(t));
}
// Bytes of one value of a fixed-size type; 0 for string and array, whose size varies.
size_t gguf_value_type_size(GgufValueType t);
bool gguf_value_type_is_integer(GgufValueType t);
bool gguf_value_type_is_float(GgufValueType t);

// Tensor element types this engine reads. The numbers are ggml's type ids.
// The block layouts are ggml's (quant/ggml_blocks.h gives them byte by byte).
enum class GgmlType : uint32_t {
    F32 = 0,
    F16 = 1,   // IEEE half
    Q4_0 = 2,  // blocks of 32: f16 d, 16 bytes of nibbles; value = (nibble - 8) * d
    Q4_1 = 3,  // blocks of 32: f16 d, f16 m, nibbles; value = nibble * d + m
    Q5_0 = 6,  // blocks of 32: f16 d, 32 high bits, nibbles; value = (q5 - 16) * d
    Q5_1 = 7,  // blocks of 32: f16 d, f16 m, 32 high bits, nibbles; value = q5 * d + m
    Q8_0 = 8,  // blocks of 32: f16 d, then 32 int8 q; value = d * q
    Q4_K = 12, // super-blocks of 256: f16 d, dmin, 8 packed 6-bit scales and mins, nibbles
    Q5_K = 13, // as Q4_K plus 256 high bits
    Q6_K = 14, // super-blocks of 256: low nibbles, high 2 bits, 16 int8 scales, f16 d
};

// ggml's name of any ggml type id ("f32", "q8_0", "q4_K", "bf16", ...), or nullptr when the
// id is unknown. Knowing names of types we cannot read lets errors say e.g.
// "type q4_K (12) is not supported yet".
const char* ggml_type_name(uint32_t type_id);

// Storage layout of a supported type: elements come in blocks of `block_elems` that take
// `block_bytes` bytes; a row's length (ne[0]) must be a multiple of block_elems.
struct GgmlTypeLayout {
    int64_t block_elems;
    size_t block_bytes;
};

// Whether this engine reads tensors of `type_id`, and if so their layout.
bool ggml_type_supported(uint32_t type_id);
GgmlTypeLayout ggml_type_layout(GgmlType type);
// The names of the supported types, "f32, f16, q4_0, ...", for error messages.
const char* ggml_supported_type_names();
// Whether `type` stores blocks of quantised values (every supported type but F32 and F16).
inline bool ggml_type_is_quantised(GgmlType type) {
    return type != GgmlType::F32 && type != GgmlType::F16;
}

}  // namespace pk
