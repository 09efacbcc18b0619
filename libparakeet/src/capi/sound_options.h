// parakeet_sound_opts read over the defaults, shared by the sound and scene streams.
#pragma once

#include "model/sound/sound_stream.h"
#include "parakeet_capi.h"

namespace pk::capi {

// The caller's options over the defaults, in parakeet.cpp's three groups: a group is read only
// when o->size covers all of it. NULL: the defaults.
SoundOptions read_sound_options(const parakeet_sound_opts* o);

}  // namespace pk::capi
