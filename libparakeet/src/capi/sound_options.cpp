#include "capi/sound_options.h"

#include <cstddef>

namespace pk::capi {

namespace {

// Whether the caller's struct (o->size bytes) reaches the end of `field_end` bytes.
bool covers(const parakeet_sound_opts* o, size_t field_end) { return o->size >= 0 && static_cast<size_t>(o->size) >= field_end; }

}  // namespace

SoundOptions read_sound_options(const parakeet_sound_opts* o) {
    SoundOptions out;
    if (o == nullptr) return out;
    if (covers(o, offsetof(parakeet_sound_opts, hop_sec) + sizeof(float))) {
        out.window_sec = o->window_sec;
        out.hop_sec = o->hop_sec;
    }
    if (covers(o, offsetof(parakeet_sound_opts, min_duration_sec) + sizeof(float))) {
        out.on_threshold = o->on_threshold;
        out.off_threshold = o->off_threshold;
        out.min_duration_sec = o->min_duration_sec;
    }
    if (covers(o, offsetof(parakeet_sound_opts, top_k) + sizeof(int))) out.top_k = o->top_k;
    return out;
}

}  // namespace pk::capi
