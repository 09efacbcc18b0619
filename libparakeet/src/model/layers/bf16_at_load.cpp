#include "model/layers/bf16_at_load.h"

#include "common/errors.h"
#include "kernels/matmul.h"
#include "model/gguf_schema.h"

namespace pk {

void check_bf16_available(IsaLevel level) {
    if (kernels::PackedWeights::bf16_available(level)) return;
    const CpuFeatures& cpu = cpu_features();
    throw Unsupported(std::string("bf16 needs AVX512_BF16 at the avx512 level; this model runs ") +
                      isa_level_name(level) + (cpu.avx512bf16 ? "" : " on a CPU without AVX512_BF16"));
}

bool bf16_at_load(const std::string& name) { return name.rfind(schema::kEncoderTensorPrefix, 0) == 0; }

}  // namespace pk
