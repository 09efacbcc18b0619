#include "model/encoder/attention_setting.h"

#include <string>

#include "common/errors.h"

namespace pk {

AttentionSetting AttentionSetting::local(int left, int right) {
    if (left <= 0 || right <= 0)
        throw InvalidArgument("local attention needs a left and a right context above 0 (got " +
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
        case Mode::Chunked: return "chunked";
    }
    return "unknown";
}

std::string AttentionSetting::describe() const {
    if (mode != Mode::Local && mode != Mode::Chunked) return mode_name();
    return std::string(mode_name()) + "[" + std::to_string(left) + "," + std::to_string(right) + "]";
}

}  // namespace pk
