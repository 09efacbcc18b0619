#include "gguf/gguf_types.h"

namespace pk {

const char* gguf_value_type_name(uint32_t type_id) {
    static const char* const kNames[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                         "bool", "string", "array", "u64", "i64", "f64"};
    return type_id < sizeof(kNames) / sizeof(kNames[0]) ? kNames[type_id] : nullptr;
}

size_t gguf_value_type_size(GgufValueType t) {
    switch (t) {
        case GgufValueType::U8:
        case GgufValueType::I8:
        case GgufValueType::Bool:
            return 1;
        case GgufValueType::U16:
        case GgufValueType::I16:
            return 2;
        case GgufValueType::U32:
        case GgufValueType::I32:
        case GgufValueType::F32:
            return 4;
        case GgufValueType::U64:
        case GgufValueType::I64:
        case GgufValueType::F64:
            return 8;
        case GgufValueType::String:
        case GgufValueType::Array:
            return 0;
    }
    return 0;
}

bool gguf_value_type_is_integer(GgufValueType t) {
    switch (t) {
        case GgufValueType::U8:
        case GgufValueType::I8:
        case GgufValueType::U16:
        case GgufValueType::I16:
        case GgufValueType::U32:
        case GgufValueType::I32:
        case GgufValueType::U64:
        case GgufValueType::I64:
            return true;
        default:
            return false;
    }
}

bool gguf_value_type_is_float(GgufValueType t) {
    return t == GgufValueType::F32 || t == GgufValueType::F64;
}

const char* ggml_type_name(uint32_t type_id) {
    // Index = ggml type id; "" marks ids ggml has retired (Q4_2/Q4_3, the repacked Q4_0 and
    // IQ4_NL variants).
    static const char* const kNames[] = {
        "f32",     "f16",    "q4_0",    "q4_1",   "",       "",      "q5_0",  "q5_1",
        "q8_0",    "q8_1",   "q2_K",    "q3_K",   "q4_K",   "q5_K",  "q6_K",  "q8_K",
        "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s",  "iq4_nl", "iq3_s", "iq2_s", "iq4_xs",
        "i8",      "i16",    "i32",     "i64",    "f64",    "iq1_m", "bf16",  "",
        "",        "",       "tq1_0",   "tq2_0",  "",       "",      "",      "mxfp4",
    };
    if (type_id >= sizeof(kNames) / sizeof(kNames[0]) || kNames[type_id][0] == '\0') return nullptr;
    return kNames[type_id];
}

bool ggml_type_supported(uint32_t type_id) {
    switch (static_cast<GgmlType>(type_id)) {
        case GgmlType::F32:
        case GgmlType::F16:
        case GgmlType::Q4_0:
        case GgmlType::Q4_1:
        case GgmlType::Q5_0:
        case GgmlType::Q5_1:
        case GgmlType::Q8_0:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
            return true;
    }
    return false;
}

const char* ggml_supported_type_names() {
    return "f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, q6_K";
}

GgmlTypeLayout ggml_type_layout(GgmlType type) {
    switch (type) {
        case GgmlType::F32: return {1, 4};
        case GgmlType::F16: return {1, 2};
        case GgmlType::Q4_0: return {32, 18};
        case GgmlType::Q4_1: return {32, 20};
        case GgmlType::Q5_0: return {32, 22};
        case GgmlType::Q5_1: return {32, 24};
        case GgmlType::Q8_0: return {32, 34};
        case GgmlType::Q4_K: return {256, 144};
        case GgmlType::Q5_K: return {256, 176};
        case GgmlType::Q6_K: return {256, 210};
    }
    return {1, 0};  // unreachable for the enumerators above
}

}  // namespace pk
