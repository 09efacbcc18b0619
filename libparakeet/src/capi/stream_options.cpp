#include "capi/stream_options.h"

#include <string>

#include "capi/json_scanner.h"
#include "common/errors.h"
#include "model/model.h"

namespace pk::capi {

StreamSettings parse_stream_options(const char* json) {
    StreamSettings s;
    if (json == nullptr) return s;
    JsonScanner in(json, "stream options");
    in.object([&](const std::string& k) {
        if (k == "chunk_sec") {
            s.chunk_sec = in.number();
        } else if (k == "left_sec") {
            s.left_sec = in.number();
        } else if (k == "right_sec") {
            s.right_sec = in.number();
        } else if (k == "decoder") {
            s.decoder = decoder_from_int(static_cast<int>(in.integer("decoder", -1000000, 1000000)));
        } else {
            throw InvalidArgument("stream options: unknown key \"" + k +
                                  "\" (known: chunk_sec, left_sec, right_sec, decoder)");
        }
    });
    return s;
}

}  // namespace pk::capi
