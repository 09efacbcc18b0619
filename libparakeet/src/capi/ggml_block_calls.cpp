// The ggml block formats through the C ABI (quant/ggml_blocks.h), for converters: the Python
// package quantises and dequantises GGUF tensors with the library's code, so its files are the
// bytes the engine and ggml agree on.
#include <string>

#include "capi/context.h"
#include "common/errors.h"
#include "parakeet_capi.h"
#include "quant/ggml_blocks.h"

using pk::capi::guarded;

namespace {

pk::GgmlType checked_type(int ggml_type) {
    if (ggml_type < 0 || !pk::ggml_type_supported(static_cast<uint32_t>(ggml_type))) {
        throw pk::InvalidArgument("ggml type " + std::to_string(ggml_type) +
                                  " is not one this library reads (" + pk::ggml_supported_type_names() + ")");
    }
    return static_cast<pk::GgmlType>(ggml_type);
}

// The bytes of n values of `type`, checking that they are whole blocks and that `have` holds them.
size_t checked_bytes(pk::GgmlType type, int64_t n, size_t have, const char* which) {
    if (n < 0 || n % pk::quant::block_values(type) != 0) {
        throw pk::InvalidArgument(std::to_string(n) + " values are not a whole number of " +
                                  pk::ggml_type_name(static_cast<uint32_t>(type)) + " blocks of " +
                                  std::to_string(pk::quant::block_values(type)));
    }
    const size_t need = pk::quant::row_bytes(type, n);
    if (have < need) {
        throw pk::InvalidArgument(std::string(which) + " holds " + std::to_string(have) + " bytes, " +
                                  std::to_string(need) + " are needed");
    }
    return need;
}

}  // namespace

extern "C" {

size_t parakeet_capi_ggml_row_bytes(int ggml_type, int64_t n_values) {
    if (ggml_type < 0 || !pk::ggml_type_supported(static_cast<uint32_t>(ggml_type)) || n_values < 0) return 0;
    const auto type = static_cast<pk::GgmlType>(ggml_type);
    if (n_values % pk::quant::block_values(type) != 0) return 0;
    return pk::quant::row_bytes(type, n_values);
}

int parakeet_capi_ggml_quantize(int ggml_type, const float* src, int64_t n_values, void* dst, size_t dst_bytes) {
    return guarded<int>(nullptr, -1, [&] {
        const pk::GgmlType type = checked_type(ggml_type);
        checked_bytes(type, n_values, dst_bytes, "dst");
        if (n_values > 0 && (src == nullptr || dst == nullptr)) throw pk::InvalidArgument("src or dst is NULL");
        pk::quant::quantize_row(type, src, n_values, static_cast<uint8_t*>(dst));
        return 0;
    });
}

int parakeet_capi_ggml_dequantize(int ggml_type, const void* src, size_t src_bytes, int64_t n_values, float* dst) {
    return guarded<int>(nullptr, -1, [&] {
        const pk::GgmlType type = checked_type(ggml_type);
        checked_bytes(type, n_values, src_bytes, "src");
        if (n_values > 0 && (src == nullptr || dst == nullptr)) throw pk::InvalidArgument("src or dst is NULL");
        pk::quant::dequantize_row(type, static_cast<const uint8_t*>(src), n_values, dst);
        return 0;
    });
}

}  // extern "C"
