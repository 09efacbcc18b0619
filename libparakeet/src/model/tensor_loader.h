// TensorLoader: takes named tensors out of a model's GGUF file and checks that each has the
// type and shape the engine expects, so a wrong or foreign file fails at load with a message
// that names the tensor ("encoder.layers.3.self_attn.linear_q.weight has shape [64, 32],
// expected [64, 64]") instead of computing garbage.
//
// Shapes are given the PyTorch way (outermost first, as in the NeMo state_dict), e.g.
// {out, in} for a Linear weight; the file stores them reversed (ggml ne order).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "kernels/kernel_table.h"

namespace pk {

// What Linear::load may do to a stored F32/F16 matrix.
struct WeightConversions {
    bool q8_at_load = false;  // quantise those of model/layers/q8_at_load.h to Q8_0
    bool q8_subsampling = false;  // ... the subsampling's pointwise convolutions included
    bool bf16 = false;        // round those of model/layers/bf16_at_load.h to bfloat16
};

class TensorLoader {
public:
    // `level`: the ISA level the model runs at (at most the CPU's). The matrices are packed for
    // it, and the components keep its kernel table (kernels()) for their other kernels.
    TensorLoader(const GgufReader& gguf, IsaLevel level, WeightConversions conversions = {})
        : gguf_(gguf), kernels_(&kernels::kernel_table(level)), conversions_(conversions) {}

    bool q8_at_load() const { return conversions_.q8_at_load; }
    bool q8_subsampling() const { return conversions_.q8_subsampling; }
    bool bf16() const { return conversions_.bf16; }
    IsaLevel level() const { return kernels_->level; }
    const kernels::KernelTable& kernels() const { return *kernels_; }

    bool has(const std::string& name) const { return gguf_.find_tensor(name) != nullptr; }

    // The tensor `name`, of any supported type, with the given PyTorch shape (size-1
    // dimensions ignored on either side: model/tensor_shape.h). Throws ModelError.
    const GgufTensor& get(const std::string& name, std::initializer_list<int64_t> torch_shape) const;

    // An F32 tensor's data (throws ModelError when it is stored in another type).
    const float* f32(const std::string& name, std::initializer_list<int64_t> torch_shape) const;

    // f32() or nullptr when the tensor is absent (optional biases).
    const float* optional_f32(const std::string& name, std::initializer_list<int64_t> torch_shape) const;

    // The matrix kernels' type for a weight matrix stored as tensor.type (every supported type
    // maps to one: their ids are ggml's).
    static kernels::WeightType weight_type(const GgufTensor& tensor) {
        return static_cast<kernels::WeightType>(tensor.type);
    }

    // Lets the OS drop the file pages of a tensor the caller has copied out (a repacked
    // matrix): the peak RSS of a load is then about the packed weights, not the packed weights
    // plus the file. The data stays readable (a read faults it back in from the file).
    void release(const GgufTensor& tensor) const { gguf_.drop_pages(tensor); }

    [[noreturn]] void fail(const std::string& what) const;

private:
    const GgufReader& gguf_;
    const kernels::KernelTable* kernels_;
    WeightConversions conversions_;
};

}  // namespace pk
