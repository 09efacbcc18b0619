// Token agreement of the quantised-model reports: the edit distance between two id sequences.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace token_agreement {

template <class Id>
size_t edit_distance(const std::vector<Id>& a, const std::vector<Id>& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

}  // namespace token_agreement
