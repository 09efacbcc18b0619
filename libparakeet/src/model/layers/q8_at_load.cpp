#include "model/layers/q8_at_load.h"

#include <regex>

#include "model/gguf_schema.h"

namespace pk {

bool is_q8_0_model(const GgufReader& gguf) {
    const GgufTensor* t = gguf.find_tensor(schema::weight(schema::layer_module(0, schema::kFeedForward1Linear1)));
    return t != nullptr && t->type == GgmlType::Q8_0;
}

bool quantised_at_load(const std::string& name, bool subsampling) {
    static const std::regex kNames(schema::kQuantisedAtLoad);
    static const std::regex kSubsamplingNames(schema::kQuantisedAtLoadSubsampling);
    return std::regex_match(name, kNames) ||
           (subsampling && std::regex_match(name, kSubsamplingNames));
}

}  // namespace pk
