// The classes of a score vector ranked for display: highest score first, ties by index.
#pragma once

#include <vector>

namespace pk {

// The indices of `scores`, highest first (ties: lower index first), at most top_k of them (all
// for top_k <= 0).
std::vector<int> top_classes(const std::vector<float>& scores, int top_k);

}  // namespace pk
