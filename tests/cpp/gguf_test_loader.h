// A GGUF file built in memory (gguf_test_builder.h), read, and a TensorLoader over it, for the
// tests that load single layers from it. The file's bytes must outlive it.
#pragma once

#include <cstdint>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/tensor_loader.h"

namespace gguf_test {

struct LoadedGguf {
    // At `level`; with q8_at_load a quantised file's conversions (its F32 kernels quantised to Q8_0
    // at load).
    LoadedGguf(const std::vector<uint8_t>& file, pk::IsaLevel level, bool q8_at_load)
        : gguf(pk::GgufReader::from_buffer(file.data(), file.size(), "test.gguf")),
          loader(gguf, level, pk::WeightConversions{q8_at_load}) {}

    pk::GgufReader gguf;
    pk::TensorLoader loader;  // reads gguf (declared after it, so built after it)
};

}  // namespace gguf_test
