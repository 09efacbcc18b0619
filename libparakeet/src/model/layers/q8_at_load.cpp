#include "model/layers/q8_at_load.h"

#include <cstdlib>
#include <regex>

#include "common/errors.h"

namespace pk {

namespace {

// A 0/1 switch from the environment: unset or empty gives `unset`; "0" / "1"; anything else
// throws, naming what each value means.
bool switch_from_environment(const char* name, bool unset, const char* meaning) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return unset;
    const std::string s(v);
    if (s == "0") return false;
    if (s == "1") return true;
    throw InvalidInput(std::string(name) + " must be " + meaning + ", not \"" + s + "\"");
}

}  // namespace

bool q8_all_from_environment() {
    return switch_from_environment("PARAKEET_Q8_ALL", true,
                                   "0 (keep a q8_0 model's F32 matrices) or 1 (quantise them at load)");
}

bool q8_subsampling_from_environment() {
    return switch_from_environment("PARAKEET_Q8_SUBSAMPLING", false,
                                   "0 (keep the subsampling's pointwise convolutions F32) or 1 (quantise them at "
                                   "load in a q8_0 model)");
}

bool is_q8_0_model(const GgufReader& gguf) {
    const GgufTensor* t = gguf.find_tensor("encoder.layers.0.feed_forward1.linear1.weight");
    return t != nullptr && t->type == GgmlType::Q8_0;
}

bool quantised_at_load(const std::string& name) {
    static const std::regex kNames(
        "encoder\\.layers\\.\\d+\\.conv\\.pointwise_conv[12]\\.weight"
        "|encoder\\.pre_encode\\.out\\.weight");
    static const std::regex kSubsamplingNames("encoder\\.pre_encode\\.conv\\.[36]\\.weight");
    return std::regex_match(name, kNames) ||
           (std::regex_match(name, kSubsamplingNames) && q8_subsampling_from_environment());
}

}  // namespace pk
