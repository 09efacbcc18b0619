#include "capi/load_options_json.h"

#include <string>

#include "capi/json_scanner.h"
#include "common/errors.h"

namespace pk::capi {
namespace {

constexpr const char* kWhat = "load options";

// "auto", "full" or [left, right] (local attention; both >= 1).
AttentionSetting attention_value(JsonScanner& in) {
    if (in.peek() == '"') {
        const std::string mode = in.string();
        if (mode == "auto") return AttentionSetting::automatic();
        if (mode == "full") return AttentionSetting::full();
        throw InvalidArgument(std::string(kWhat) + ": attention must be \"auto\", \"full\" or [left, right], not \"" +
                              mode + "\"");
    }
    in.expect('[', "\"auto\", \"full\" or [left, right] for attention");
    const int left = static_cast<int>(in.integer("attention's left context", 1, 1 << 20));
    in.expect(',', "',' between attention's left and right contexts");
    const int right = static_cast<int>(in.integer("attention's right context", 1, 1 << 20));
    in.expect(']', "']' after attention's right context");
    return AttentionSetting::local(left, right);
}

IsaLevel isa_value(JsonScanner& in) {
    const std::string name = in.string();
    const std::optional<IsaLevel> level = isa_level_from_name(name);
    if (!level)
        throw InvalidArgument(std::string(kWhat) + ": isa must be \"scalar\", \"avx2\", \"avx512\", \"neon\", \"dotprod\" or \"i8mm\", not \"" + name +
                              "\"");
    return *level;
}

}  // namespace

void apply_load_options_json(const char* json, LoadOptions& options) {
    if (json == nullptr) return;
    JsonScanner in(json, kWhat);
    in.object([&](const std::string& k) {
        if (k == "isa") {
            options.isa = isa_value(in);
        } else if (k == "attention") {
            options.attention = attention_value(in);
        } else if (k == "q8_all") {
            options.q8_all = in.boolean();
        } else if (k == "q8_subsampling") {
            options.q8_subsampling = in.boolean();
        } else if (k == "bf16") {
            options.bf16 = in.boolean();
        } else if (k == "threads") {
            options.threads = static_cast<int>(in.integer("threads", 1, 1024));
        } else if (k == "component") {
            options.component = in.string();
        } else {
            throw InvalidArgument(std::string(kWhat) + ": unknown key \"" + k +
                                  "\" (known: isa, attention, q8_all, q8_subsampling, bf16, threads, component)");
        }
    });
}

}  // namespace pk::capi
