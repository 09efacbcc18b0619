#include "capi/diar_options_json.h"

#include <string>

#include "capi/diar_streaming_option.h"
#include "capi/json_scanner.h"
#include "common/errors.h"

namespace pk::capi {
namespace {

double in_range(JsonScanner& in, const std::string& key, double lo, double hi) {
    const double v = in.number();
    if (!(v >= lo && v <= hi))
        throw InvalidArgument("diarization options: " + key + " = " + std::to_string(v) + " is out of range [" +
                              std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
}

}  // namespace

DiarOptions parse_diar_options(const char* json, const DiarOptions& defaults, const DiarModel& model) {
    DiarOptions o = defaults;
    if (json == nullptr) return o;
    JsonScanner in(json, "diarization options");
    in.object([&](const std::string& k) {
        if (k == "probabilities") {
            o.probabilities = in.boolean();
        } else if (k == "onset") {
            o.post.onset = in_range(in, k, 0.0, 1.0);
        } else if (k == "offset") {
            o.post.offset = in_range(in, k, 0.0, 1.0);
        } else if (k == "pad_onset") {
            o.post.pad_onset = in_range(in, k, 0.0, 10.0);
        } else if (k == "pad_offset") {
            o.post.pad_offset = in_range(in, k, 0.0, 10.0);
        } else if (k == "min_duration_on") {
            o.post.min_duration_on = in_range(in, k, 0.0, 3600.0);
        } else if (k == "min_duration_off") {
            o.post.min_duration_off = in_range(in, k, 0.0, 3600.0);
        } else if (k == "streaming") {
            o.streaming = parse_diar_streaming_option(in, model);
        } else {
            throw InvalidArgument("diarization options: unknown key \"" + k +
                                  "\" (known: probabilities, onset, offset, pad_onset, pad_offset, "
                                  "min_duration_on, min_duration_off, streaming)");
        }
    });
    return o;
}

}  // namespace pk::capi
