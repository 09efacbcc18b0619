#include "model/tensor_loader.h"

#include "common/errors.h"

namespace pk {
namespace {

// ggml order, trailing ones removed: torch {a, b, c} -> {c, b, a}.
std::vector<int64_t> ggml_dims(std::initializer_list<int64_t> torch_shape) {
    std::vector<int64_t> d(torch_shape.begin(), torch_shape.end());
    std::vector<int64_t> out(d.rbegin(), d.rend());
    while (out.size() > 1 && out.back() == 1) out.pop_back();
    return out;
}

std::vector<int64_t> stored_dims(const GgufTensor& t) {
    std::vector<int64_t> out(t.ne.begin(), t.ne.begin() + (t.n_dims > 0 ? t.n_dims : 1));
    while (out.size() > 1 && out.back() == 1) out.pop_back();
    return out;
}

std::string torch_shape_string(std::initializer_list<int64_t> s) {
    std::string out = "[";
    bool first = true;
    for (int64_t v : s) {
        if (!first) out += ", ";
        out += std::to_string(v);
        first = false;
    }
    return out + "]";
}

std::string torch_shape_string(const GgufTensor& t) {
    std::string out = "[";
    for (int i = (t.n_dims > 0 ? t.n_dims : 1) - 1; i >= 0; --i) {
        out += std::to_string(t.ne[static_cast<size_t>(i)]);
        if (i > 0) out += ", ";
    }
    return out + "]";
}

}  // namespace

void TensorLoader::fail(const std::string& what) const { throw ModelError(gguf_.name() + ": " + what); }

const GgufTensor& TensorLoader::get(const std::string& name, std::initializer_list<int64_t> torch_shape) const {
    const GgufTensor* t = gguf_.find_tensor(name);
    if (t == nullptr) fail("missing tensor " + name);
    if (stored_dims(*t) != ggml_dims(torch_shape))
        fail(name + " has shape " + torch_shape_string(*t) + ", expected " + torch_shape_string(torch_shape));
    return *t;
}

const float* TensorLoader::f32(const std::string& name, std::initializer_list<int64_t> torch_shape) const {
    const GgufTensor& t = get(name, torch_shape);
    if (t.type != GgmlType::F32) fail(name + " must be stored as F32");
    return reinterpret_cast<const float*>(t.data);
}

const float* TensorLoader::optional_f32(const std::string& name,
                                        std::initializer_list<int64_t> torch_shape) const {
    return has(name) ? f32(name, torch_shape) : nullptr;
}

}  // namespace pk
