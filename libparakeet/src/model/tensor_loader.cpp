#include "model/tensor_loader.h"

#include "common/errors.h"
#include "model/tensor_shape.h"

namespace pk {

void TensorLoader::fail(const std::string& what) const { throw ModelError(gguf_.name() + ": " + what); }

const GgufTensor& TensorLoader::get(const std::string& name, std::initializer_list<int64_t> torch_shape) const {
    const GgufTensor* t = gguf_.find_tensor(name);
    if (t == nullptr) fail("missing tensor " + name);
    const std::vector<int64_t> want(torch_shape);
    if (!same_shape_ignoring_ones(*t, want))
        fail(name + " has shape " + torch_shape_string(*t) + ", expected " + torch_shape_string(want));
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
