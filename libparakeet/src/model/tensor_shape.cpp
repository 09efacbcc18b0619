#include "model/tensor_shape.h"

namespace pk {
namespace {

std::vector<int64_t> without_ones(const std::vector<int64_t>& dims) {
    std::vector<int64_t> out;
    for (int64_t d : dims)
        if (d != 1) out.push_back(d);
    return out;
}

std::vector<int64_t> stored_torch_order(const GgufTensor& t) {
    std::vector<int64_t> dims;
    for (int i = (t.n_dims > 0 ? t.n_dims : 1) - 1; i >= 0; --i) dims.push_back(t.ne[static_cast<size_t>(i)]);
    return dims;
}

}  // namespace

bool same_shape_ignoring_ones(const GgufTensor& t, const std::vector<int64_t>& torch_shape) {
    return without_ones(stored_torch_order(t)) == without_ones(torch_shape);
}

std::string torch_shape_string(const std::vector<int64_t>& torch_shape) {
    std::string out = "[";
    for (size_t i = 0; i < torch_shape.size(); ++i) out += (i ? ", " : "") + std::to_string(torch_shape[i]);
    return out + "]";
}

std::string torch_shape_string(const GgufTensor& t) { return torch_shape_string(stored_torch_order(t)); }

}  // namespace pk
