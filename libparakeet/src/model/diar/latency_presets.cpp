#include "model/diar/latency_presets.h"

#include <string>

#include "common/errors.h"

namespace pk {

DiarStreamingParams diar_latency_preset(int mode, const DiarStreamingParams& model) {
    struct Preset {
        int chunk_len, chunk_right_context;
    };
    static constexpr Preset kPresets[] = {{6, 7}, {6, 2}, {3, 1}};  // LOW, VERY_LOW, ULTRA_LOW
    if (mode == static_cast<int>(DiarLatency::Model)) return model;
    if (mode < 1 || mode > 3) throw InvalidArgument("unknown diarization latency mode " + std::to_string(mode));
    DiarStreamingParams p = model;
    p.chunk_len = kPresets[mode - 1].chunk_len;
    p.chunk_right_context = kPresets[mode - 1].chunk_right_context;
    p.fifo_len = 188;
    p.spkcache_len = 188;
    p.spkcache_update_period = 144;
    return p;
}

}  // namespace pk
