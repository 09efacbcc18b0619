#include "capi/stream_options.h"

#include <string>

#include "capi/decoder_number.h"
#include "capi/json_scanner.h"
#include "common/errors.h"

namespace pk::capi {

StreamOptions parse_stream_options(const char* json) {
    StreamOptions o;
    if (json == nullptr) return o;
    JsonScanner in(json, "stream options");
    in.object([&](const std::string& k) {
        if (k == "chunk_sec") {
            o.settings.chunk_sec = in.number();
            o.has_window = true;
        } else if (k == "left_sec") {
            o.settings.left_sec = in.number();
            o.has_window = true;
        } else if (k == "right_sec") {
            o.settings.right_sec = in.number();
            o.has_window = true;
        } else if (k == "decoder") {
            o.settings.decoder = decoder_from_int(static_cast<int>(in.integer("decoder", -1000000, 1000000)));
        } else if (k == "att_context") {
            in.expect('[', "'[' (att_context is [left, right])");
            const int left = static_cast<int>(in.integer("att_context left", 0, 1 << 16));
            in.expect(',', "',' (att_context is [left, right])");
            const int right = static_cast<int>(in.integer("att_context right", 0, 1 << 16));
            in.expect(']', "']' (att_context is [left, right])");
            o.att_context = AttContext{left, right};
        } else if (k == "language") {
            o.language = in.string();
        } else {
            throw InvalidArgument("stream options: unknown key \"" + k +
                                  "\" (known: chunk_sec, left_sec, right_sec, att_context, decoder, language)");
        }
    });
    return o;
}

}  // namespace pk::capi
