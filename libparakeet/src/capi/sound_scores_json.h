// The drained window scores as JSON, shared by the sound and scene streams:
// [{"start":%.3f,"end":%.3f,"tags":[{"index":i,"label":"...","score":%.4f}, ...]}, ...]
#pragma once

#include <string>
#include <vector>

#include "model/sound/sound_stream.h"

namespace pk::capi {

std::string scored_windows_json(const std::vector<ScoredWindow>& windows, const std::vector<std::string>& labels);

}  // namespace pk::capi
