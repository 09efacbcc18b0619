#include "model/layers/q8_at_load.h"

#include <regex>

namespace pk {

bool is_q8_0_model(const GgufReader& gguf) {
    const GgufTensor* t = gguf.find_tensor("encoder.layers.0.feed_forward1.linear1.weight");
    return t != nullptr && t->type == GgmlType::Q8_0;
}

bool quantised_at_load(const std::string& name, bool subsampling) {
    static const std::regex kNames(
        "encoder\\.layers\\.\\d+\\.conv\\.pointwise_conv[12]\\.weight"
        "|encoder\\.pre_encode\\.out\\.weight");
    static const std::regex kSubsamplingNames("encoder\\.pre_encode\\.conv\\.[36]\\.weight");
    return std::regex_match(name, kNames) ||
           (subsampling && std::regex_match(name, kSubsamplingNames));
}

}  // namespace pk
