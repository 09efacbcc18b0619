#include "model/diar/streaming_params.h"

#include <string>

#include "common/errors.h"

namespace pk {

void DiarStreamingParams::check(int n_spk) const {
    // NeMo's _check_streaming_parameters, in its order and with its minimums.
    const struct {
        const char* name;
        int value, min;
    } limits[] = {
        {"spkcache_len", spkcache_len, (1 + spkcache_sil_frames_per_spk) * n_spk},
        {"fifo_len", fifo_len, 0},
        {"chunk_len", chunk_len, 1},
        {"spkcache_update_period", spkcache_update_period, 1},
        {"chunk_left_context", chunk_left_context, 0},
        {"chunk_right_context", chunk_right_context, 0},
        {"spkcache_sil_frames_per_spk", spkcache_sil_frames_per_spk, 0},
    };
    for (const auto& l : limits)
        if (l.value < l.min)
            throw InvalidArgument(std::string("streaming parameter ") + l.name + " must be at least " +
                                  std::to_string(l.min) + ", got " + std::to_string(l.value));
}

}  // namespace pk
