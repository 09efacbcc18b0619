#include "kernels/ops_layer_norm.h"

#include <cmath>

#include "kernels/kernel_table.h"
#include "kernels/ops_grain.h"

namespace pk::kernels {
namespace {

// Portable path. Sums run in double: the loops are latency-bound either way, and double
// keeps the mean and variance exact enough for any row length.
void layer_norm_rows_scalar(const float* x, int64_t rows, int64_t cols, const float* weight,
                            const float* bias, float eps, float* y) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        double sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) sum += xr[c];
        const double mean = sum / static_cast<double>(cols);
        double sq = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const double d = xr[c] - mean;
            sq += d * d;
        }
        const double var = sq / static_cast<double>(cols);
        const float rstd = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));
        const float m = static_cast<float>(mean);
        for (int64_t c = 0; c < cols; ++c) yr[c] = (xr[c] - m) * rstd * weight[c] + bias[c];
    }
}

}  // namespace

void add_ops_layer_norm_scalar(KernelTable& t) { t.ops.layer_norm_rows = layer_norm_rows_scalar; }

void layer_norm(const KernelTable& k, ThreadTeam& team, const float* x, int64_t rows, int64_t cols,
                const float* weight, const float* bias, float eps, float* y) {
    if (rows <= 0 || cols <= 0) return;
    auto* rows_fn = k.ops.layer_norm_rows;
    parallel_for(team, rows, grain_for(3 * cols), [&](int64_t begin, int64_t end) {
        rows_fn(x + begin * cols, end - begin, cols, weight, bias, eps, y + begin * cols);
    });
}

}  // namespace pk::kernels
