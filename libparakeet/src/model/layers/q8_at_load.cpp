#include "model/layers/q8_at_load.h"

#include <regex>

#include "common/env_switch.h"
#include "model/gguf_schema.h"

namespace pk {

bool q8_all_from_environment() {
    return env_switch("PARAKEET_Q8_ALL", true,
                      "0 (keep a q8_0 model's F32 matrices) or 1 (quantise them at load)");
}

bool q8_subsampling_from_environment() {
    return env_switch("PARAKEET_Q8_SUBSAMPLING", false,
                      "0 (keep the subsampling's pointwise convolutions F32) or 1 (quantise them at "
                      "load in a q8_0 model)");
}

bool is_q8_0_model(const GgufReader& gguf) {
    const GgufTensor* t = gguf.find_tensor("encoder.layers.0.feed_forward1.linear1.weight");
    return t != nullptr && t->type == GgmlType::Q8_0;
}

bool quantised_at_load(const std::string& name) {
    static const std::regex kNames(schema::kQuantisedAtLoad);
    static const std::regex kSubsamplingNames(schema::kQuantisedAtLoadSubsampling);
    return std::regex_match(name, kNames) ||
           (std::regex_match(name, kSubsamplingNames) && q8_subsampling_from_environment());
}

}  // namespace pk
