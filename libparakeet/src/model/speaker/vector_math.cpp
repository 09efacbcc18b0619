#include "model/speaker/vector_math.h"

#include <algorithm>
#include <cmath>

namespace pk::speaker {

void tanh_in_place(float* x, int64_t n) {
    constexpr int64_t kRun = 64;  // values per run of the three loops, on the stack
    float e[kRun];
    for (int64_t i0 = 0; i0 < n; i0 += kRun) {
        const int64_t m = std::min(kRun, n - i0);
        float* v = x + i0;
        // Three loops: GCC vectorises none of them with the clamp inside exp's loop. Past |x| = 43.5
        // the clamp leaves e = e^-87, and tanh rounds to +-1 either way.
        for (int64_t i = 0; i < m; ++i) e[i] = std::max(-2.0f * std::fabs(v[i]), -87.0f);
        for (int64_t i = 0; i < m; ++i) e[i] = exp_from_minus_87(e[i]);
        for (int64_t i = 0; i < m; ++i) v[i] = std::copysign((1.0f - e[i]) / (1.0f + e[i]), v[i]);
    }
}

}  // namespace pk::speaker
