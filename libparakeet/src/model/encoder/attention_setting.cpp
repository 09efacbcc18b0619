#include "model/encoder/attention_setting.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "common/errors.h"

namespace pk {

AttentionSetting AttentionSetting::local(int left, int right) {
    if (left <= 0 || right <= 0)
        throw InvalidInput("local attention needs a left and a right context above 0 (got " +
                           std::to_string(left) + ", " + std::to_string(right) + ")");
    return {Mode::Local, left, right};
}

AttentionSetting AttentionSetting::resolve(int64_t frames) const {
    if (mode != Mode::Auto) return *this;
    if (frames <= kAutoFullMaxFrames) return full();
    return local(kAutoLocalContext, kAutoLocalContext);
}

const char* AttentionSetting::mode_name() const {
    switch (mode) {
        case Mode::Auto: return "auto";
        case Mode::Full: return "full";
        case Mode::Local: return "local";
    }
    return "unknown";
}

std::string AttentionSetting::describe() const {
    if (mode != Mode::Local) return mode_name();
    return "local[" + std::to_string(left) + "," + std::to_string(right) + "]";
}

AttentionSetting attention_from_environment() {
    const char* v = std::getenv("PARAKEET_ATT_CONTEXT");
    if (v == nullptr || *v == '\0') return AttentionSetting::automatic();
    errno = 0;
    char* end = nullptr;
    const long w = std::strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || w < 0 || w > INT_MAX)
        throw InvalidInput(std::string("PARAKEET_ATT_CONTEXT must be a whole number >= 0 (W > 0: local "
                                       "attention [W, W]; 0: full attention), not \"") + v + "\"");
    return w == 0 ? AttentionSetting::full() : AttentionSetting::local(static_cast<int>(w), static_cast<int>(w));
}

}  // namespace pk
