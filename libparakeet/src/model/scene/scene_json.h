// The scene stream's feed document (parakeet.cpp's scene_stream JSON, ABI 8/9): times %.3f,
// scores %.4f; "names", "name" and "name_score" only when the stream has a speaker part.
#pragma once

#include <string>
#include <vector>

#include "model/scene/scene_stream.h"

namespace pk {

// labels: the tagger's class labels (for the sounds; unused without them).
std::string scene_update_json(const SceneUpdate& u, bool named, const std::vector<std::string>& labels);

}  // namespace pk
