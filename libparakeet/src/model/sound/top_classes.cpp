#include "model/sound/top_classes.h"

#include <algorithm>
#include <numeric>

namespace pk {

std::vector<int> top_classes(const std::vector<float>& scores, int top_k) {
    std::vector<int> order(scores.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
    if (top_k > 0 && static_cast<size_t>(top_k) < order.size()) order.resize(static_cast<size_t>(top_k));
    return order;
}

}  // namespace pk
