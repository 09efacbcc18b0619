#include "model/tensor_loader.h"

#include "common/errors.h"

namespace pk {
namespace {

// Shapes compared in PyTorch order with trailing 1-sized dimensions dropped, so a 1x1 conv
// weight [out, in, 1] matches a Linear weight [out, in]: the bytes are laid out alike.
std::vector<int64_t> squeezed(std::vector<int64_t> torch_order) {
    while (torch_order.size() > 1 && torch_order.back() == 1) torch_order.pop_back();
    return torch_order;
}

std::vector<int64_t> expected_dims(std::initializer_list<int64_t> torch_shape) {
    return squeezed(std::vector<int64_t>(torch_shape.begin(), torch_shape.end()));
}

std::vector<int64_t> stored_dims(const GgufTensor& t) {
    const int n = t.n_dims > 0 ? t.n_dims : 1;
    std::vector<int64_t> torch_order;
    for (int i = n - 1; i >= 0; --i) torch_order.push_back(t.ne[static_cast<size_t>(i)]);
    return squeezed(torch_order);
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
    if (stored_dims(*t) != expected_dims(torch_shape))
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
