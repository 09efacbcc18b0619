#include "model/layers/linear.h"

namespace pk {
namespace {

kernels::WeightType weight_type(const TensorLoader& t, const GgufTensor& tensor) {
    switch (tensor.type) {
        case GgmlType::F32: return kernels::WeightType::F32;
        case GgmlType::F16: return kernels::WeightType::F16;
        case GgmlType::Q8_0: return kernels::WeightType::Q8_0;
    }
    t.fail(tensor.name + " has a type the matrix kernels cannot use");
}

}  // namespace

Linear Linear::load(const TensorLoader& t, const std::string& prefix, int64_t out, int64_t in,
                    bool bias_required) {
    Linear l;
    const GgufTensor& w = t.get(prefix + ".weight", {out, in});
    l.weights_ = std::make_shared<const kernels::PackedWeights>(weight_type(t, w), w.data, out, in);
    l.bias_ = bias_required ? t.f32(prefix + ".bias", {out}) : t.optional_f32(prefix + ".bias", {out});
    l.in_ = in;
    l.out_ = out;
    return l;
}

}  // namespace pk
