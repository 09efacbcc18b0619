// The registry file, parakeet.cpp's "PKSR" format (little-endian):
//   "PKSR", u32 version, i32 dim, u32 n_speakers,
//   version 2 only: u32 length + encoder family, u32 length + encoder weights,
//   then per speaker: u32 length + name, i32 count, dim x f32 sum of normalised embeddings.
// A registry with a fingerprint is written as version 2, one without as version 1. Readers
// refuse other versions, truncated files and trailing bytes. Writing goes to `<path>.tmp`,
// which is then renamed over `path`, so a crash never leaves half a file under the name.
#pragma once

#include <string>

#include "model/speaker/speaker_registry.h"

namespace pk::speaker {

// Throws InvalidArgument naming the path and the reason.
void save_registry(const SpeakerRegistry& registry, const std::string& path);
SpeakerRegistry load_registry(const std::string& path);

}  // namespace pk::speaker
