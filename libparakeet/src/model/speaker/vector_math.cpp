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

void column_moments(ThreadTeam& team, const float* x, int64_t T, int64_t cols, double* mean, double* dev) {
    constexpr int64_t kColumnGrain = 256;  // columns per task: whole cache lines of every row
    parallel_for(team, cols, kColumnGrain, [&](int64_t c0, int64_t c1) {
        std::fill(mean + c0, mean + c1, 0.0);
        std::fill(dev + c0, dev + c1, 0.0);
        for (int64_t t = 0; t < T; ++t)
            for (int64_t c = c0; c < c1; ++c) mean[c] += x[t * cols + c];
        for (int64_t c = c0; c < c1; ++c) mean[c] /= static_cast<double>(T);
        for (int64_t t = 0; t < T; ++t)
            for (int64_t c = c0; c < c1; ++c) {
                const double d = x[t * cols + c] - mean[c];
                dev[c] += d * d;
            }
    });
}

}  // namespace pk::speaker
