// First index of the largest of x[0, n) — the index torch.max returns on CPU.
#pragma once

namespace pk {

inline int argmax(const float* x, int n) {
    int best = 0;
    for (int i = 1; i < n; ++i)
        if (x[i] > x[best]) best = i;
    return best;
}

}  // namespace pk
