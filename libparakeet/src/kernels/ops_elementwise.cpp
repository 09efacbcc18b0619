#include "kernels/ops_elementwise.h"

#include "kernels/ops_grain.h"

namespace pk::kernels {

// Each output element is computed from its own inputs by the same expression, so the split
// of the flat range across threads cannot change any result.

void add(ThreadTeam& team, const float* a, const float* b, int64_t n, float* y) {
    parallel_for(team, n, grain_for(1), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = a[i] + b[i];
    });
}

void add_scaled(ThreadTeam& team, const float* a, const float* b, float alpha, int64_t n,
                float* y) {
    parallel_for(team, n, grain_for(1), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = a[i] + alpha * b[i];
    });
}

void scale(ThreadTeam& team, const float* x, float alpha, int64_t n, float* y) {
    parallel_for(team, n, grain_for(1), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = alpha * x[i];
    });
}

void add_bias(ThreadTeam& team, const float* x, int64_t rows, int64_t cols, const float* bias,
              float* y) {
    if (cols <= 0) return;
    parallel_for(team, rows, grain_for(cols), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float* xr = x + r * cols;
            float* yr = y + r * cols;
            for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] + bias[c];
        }
    });
}

}  // namespace pk::kernels
