#include "model/layers/bf16_at_load.h"

#include "common/env_switch.h"
#include "common/errors.h"
#include "kernels/matmul.h"

namespace pk {

bool bf16_from_environment(IsaLevel level) {
    const bool on = env_switch("PARAKEET_BF16", false,
                               "0 (keep the encoder's F32/F16 matrices) or 1 (round them to bfloat16 at load)");
    if (on && !kernels::PackedWeights::bf16_available(level)) {
        throw InvalidInput(std::string("PARAKEET_BF16=1 needs AVX512_BF16 at the avx512 level; this process runs ") +
                           isa_level_name(level) +
                           (cpu_features().avx512bf16 ? "" : " on a CPU without AVX512_BF16"));
    }
    return on;
}

bool bf16_at_load(const std::string& name) { return name.rfind("encoder.", 0) == 0; }

}  // namespace pk
