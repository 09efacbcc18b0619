#include "capi/environment.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>

#include "common/errors.h"
#include "runtime/thread_budget.h"

namespace pk::capi {
namespace {

// The variable's value; nullptr when unset or empty (both mean "the default").
const char* env_value(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr || *v == '\0' ? nullptr : v;
}

// "0" false, "1" true; anything else throws, naming the variable and what each value does.
bool env_switch(const char* name, bool unset, const char* meaning) {
    const char* v = env_value(name);
    if (v == nullptr) return unset;
    const std::string s(v);
    if (s == "0") return false;
    if (s == "1") return true;
    throw InvalidArgument(std::string(name) + " must be " + meaning + ", not \"" + s + "\"");
}

// PARAKEET_ATT_CONTEXT (parakeet.cpp's): W > 0 means local [W, W], 0 full; unset auto.
AttentionSetting attention_from_environment() {
    const char* v = env_value("PARAKEET_ATT_CONTEXT");
    if (v == nullptr) return AttentionSetting::automatic();
    errno = 0;
    char* end = nullptr;
    const long w = std::strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || w < 0 || w > INT_MAX)
        throw InvalidArgument(std::string("PARAKEET_ATT_CONTEXT must be a whole number >= 0 (W > 0: local "
                                          "attention [W, W]; 0: full attention), not \"") + v + "\"");
    return w == 0 ? AttentionSetting::full() : AttentionSetting::local(static_cast<int>(w), static_cast<int>(w));
}

// PARAKEET_CPU=scalar|avx2|avx512 (x86-64) or scalar|neon|dotprod|i8mm (AArch64) lowers the
// kernel level (a level the CPU lacks, above its own or of the other architecture, is refused
// at load, as the same load option is).
std::optional<IsaLevel> isa_from_environment() {
    const char* v = env_value("PARAKEET_CPU");
    if (v == nullptr) return std::nullopt;
    const std::optional<IsaLevel> level = isa_level_from_name(v);
    if (!level) throw InvalidArgument(std::string("PARAKEET_CPU must be scalar, avx2, avx512 (x86-64), neon, dotprod or i8mm (AArch64), not \"") + v + "\"");
    return level;
}

}  // namespace

LoadOptions load_options_from_environment() {
    LoadOptions o;
    o.isa = isa_from_environment();
    o.attention = attention_from_environment();
    o.q8_all = env_switch("PARAKEET_Q8_ALL", true, "0 (keep a q8_0 model's F32 matrices) or 1 (quantise them at load)");
    o.q8_subsampling = env_switch("PARAKEET_Q8_SUBSAMPLING", false,
                                  "0 (keep the subsampling's pointwise convolutions F32) or 1 (quantise them at "
                                  "load in a q8_0 model)");
    o.bf16 = env_switch("PARAKEET_BF16", false,
                        "0 (keep the encoder's F32/F16 matrices) or 1 (round them to bfloat16 at load)");
    return o;
}

void apply_thread_environment() {
    static std::once_flag once;
    std::call_once(once, [] {
        const char* v = env_value("PARAKEET_THREADS");
        if (v == nullptr) return;
        char* end = nullptr;
        const long n = std::strtol(v, &end, 10);
        if (end != v && *end == '\0' && n > 0 && n <= 1024) set_default_thread_count(static_cast<int>(n));
    });
}

}  // namespace pk::capi
