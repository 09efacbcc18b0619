#include "capi/vad_options_json.h"

#include <string>

#include "capi/json_scanner.h"
#include "common/errors.h"

namespace pk::capi {

namespace {

double in_range(JsonScanner& in, const std::string& key, double lo, double hi, bool lo_open) {
    const double v = in.number();
    if (v < lo || v > hi || (lo_open && v == lo))
        throw InvalidArgument("VAD options: " + key + " = " + std::to_string(v) + " is out of range (" +
                              (lo_open ? "(" : "[") + std::to_string(lo) + ", " + std::to_string(hi) + "])");
    return v;
}

}  // namespace

VadOptions parse_vad_options(const char* json, std::string* language) {
    VadOptions o;
    if (json == nullptr) return o;
    JsonScanner in(json, "VAD options");
    in.object([&](const std::string& k) {
        if (k == "threshold") {
            o.threshold = in_range(in, k, 0.0, 1.0, true);
        } else if (k == "neg_threshold") {
            o.neg_threshold = in_range(in, k, 0.0, 1.0, true);
        } else if (k == "min_speech") {
            o.min_speech = in_range(in, k, 0.0, 3600.0, false);
        } else if (k == "min_pause") {
            o.min_pause = in_range(in, k, 0.0, 3600.0, false);
        } else if (k == "speech_pad") {
            o.speech_pad = in_range(in, k, 0.0, 10.0, false);
        } else if (k == "max_segment") {
            o.max_segment = in_range(in, k, 1.0, 86400.0, false);
        } else if (k == "mode") {
            const std::string m = in.string();
            if (m == "speech")
                o.mode = VadMode::Speech;
            else if (m == "segments")
                o.mode = VadMode::Segments;
            else
                throw InvalidArgument("VAD options: mode \"" + m + "\" is not speech or segments");
        } else if (k == "probabilities") {
            o.probabilities = in.boolean();
        } else if (k == "language" && language != nullptr) {
            *language = in.string();
        } else {
            throw InvalidArgument("VAD options: unknown key \"" + k +
                                  "\" (known: threshold, neg_threshold, min_speech, min_pause, speech_pad, "
                                  "max_segment, mode, probabilities" + (language ? ", language)" : ")"));
        }
    });
    if (o.neg_threshold > o.threshold)
        throw InvalidArgument("VAD options: neg_threshold must not exceed threshold");
    if (o.max_segment > 0 && o.max_segment <= 2 * o.speech_pad + 0.032)
        throw InvalidArgument("VAD options: max_segment must exceed 2 * speech_pad + one frame");
    return o;
}

}  // namespace pk::capi
