// libFuzzer target for the GGUF reader: any input must either load — and then every value and
// tensor byte it exposes must be readable — or be rejected with pk::GgufError. A bundle
// (model/bundle/bundle.h) is also read as one: its header checked (rejected with pk::ModelError)
// and every component's prefixed view read like a file. Any other exception, crash or
// out-of-bounds read (AddressSanitizer) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/bundle/bundle.h"
#include "quant/ggml_blocks.h"

namespace {

// Reads everything a model loader could read from `r`; the sum keeps the reads alive.
uint64_t touch_everything(const pk::GgufReader& r) {
    using pk::GgufValueType;
    uint64_t sum = 0;
    for (const pk::GgufKeyInfo& k : r.keys()) {
        try {
            if (k.type == GgufValueType::String) {
                sum += r.get_string(k.name).size();
            } else if (k.type == GgufValueType::Bool) {
                sum += r.get_bool(k.name);
            } else if (pk::gguf_value_type_is_float(k.type)) {
                sum += r.get_f64(k.name) != 0;
            } else if (pk::gguf_value_type_is_integer(k.type)) {
                sum += static_cast<uint64_t>(r.get_i64(k.name));
            } else if (k.elem_type == GgufValueType::String) {
                for (const std::string& s : r.get_string_array(k.name)) sum += s.size();
            } else if (pk::gguf_value_type_is_integer(k.elem_type)) {
                sum += r.get_i64_array(k.name).size();
            } else if (pk::gguf_value_type_is_float(k.elem_type)) {
                sum += r.get_f32_array(k.name).size();
            }
        } catch (const pk::GgufError&) {
            // range errors (a u64 above i64, an f64 beyond f32) are legitimate answers
        }
    }
    for (const pk::GgufTensor& t : r.tensors()) {
        if (r.find_tensor(t.name) != &t) __builtin_trap();
        for (size_t i = 0; i < t.n_bytes; ++i) sum += t.data[i];
        // Every byte pattern decodes (scales that are NaN or infinite included): a loader may
        // dequantise any tensor the reader accepted. Bounded to keep each run fast.
        if (t.n_elements <= (1 << 16)) {
            std::vector<float> values(static_cast<size_t>(t.n_elements));
            pk::quant::dequantize_row(t.type, t.data, t.n_elements, values.data());
            for (float v : values) sum += v == v;
        }
    }
    return sum;
}

// A bundle's components, each read through its view; a header the bundle reader refuses is a
// clean rejection too.
uint64_t touch_components(const pk::GgufReader& r) {
    uint64_t sum = 0;
    try {
        for (const pk::BundleComponent& c : pk::read_bundle(r)) sum += touch_everything(r.prefixed_view(c.name + ".", c.name));
    } catch (const pk::ModelError&) {
    }
    return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const pk::GgufReader r = pk::GgufReader::from_buffer(data, size, "fuzz.gguf");
        volatile uint64_t sink = touch_everything(r) + (pk::is_bundle(r) ? touch_components(r) : 0);
        (void)sink;
    } catch (const pk::GgufError&) {
        // a clean rejection
    }
    return 0;
}
