#include "capi/diar_streaming_option.h"

#include <string>

#include "common/errors.h"
#include "model/diar/diar_streaming.h"

namespace pk::capi {

DiarStreamingParams parse_diar_streaming_option(JsonScanner& in, const DiarModel& model) {
    DiarStreamingParams p = model.config().streaming;
    struct Field {
        const char* name;
        int* value;
    } fields[] = {{"chunk_len", &p.chunk_len},
                  {"chunk_right_context", &p.chunk_right_context},
                  {"chunk_left_context", &p.chunk_left_context},
                  {"fifo_len", &p.fifo_len},
                  {"spkcache_len", &p.spkcache_len},
                  {"spkcache_update_period", &p.spkcache_update_period}};
    in.expect('{', "a JSON object for \"streaming\"");
    if (!in.take('}')) {
        do {
            const std::string k = in.string();
            in.expect(':', "':'");
            Field* f = nullptr;
            for (Field& x : fields)
                if (k == x.name) f = &x;
            if (f == nullptr)
                throw InvalidArgument("diarization options: unknown streaming key \"" + k +
                                      "\" (known: chunk_len, chunk_right_context, chunk_left_context, fifo_len, "
                                      "spkcache_len, spkcache_update_period)");
            *f->value = static_cast<int>(in.integer("streaming." + k, 0, 1000000));
        } while (in.take(','));
        in.expect('}', "',' or '}'");
    }
    p.check(model.config().n_speakers);
    return p;
}

}  // namespace pk::capi
