#include "kernels/ops_softmax.h"

#include <cmath>
#include <limits>

#include "kernels/kernel_table.h"
#include "kernels/ops_grain.h"

namespace pk::kernels {
namespace {

float row_max(const float* x, int64_t cols) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t c = 0; c < cols; ++c) m = x[c] > m ? x[c] : m;
    return m;
}

void softmax_rows_scalar(const float* x, int64_t rows, int64_t cols, float* y) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const float m = row_max(xr, cols);
        double sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            yr[c] = std::exp(xr[c] - m);
            sum += yr[c];
        }
        const float inv = static_cast<float>(1.0 / sum);
        for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
    }
}

void log_softmax_rows_scalar(const float* x, int64_t rows, int64_t cols, float* y) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        const float m = row_max(xr, cols);
        double sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) sum += std::exp(xr[c] - m);
        const float log_sum = static_cast<float>(std::log(sum));
        for (int64_t c = 0; c < cols; ++c) yr[c] = (xr[c] - m) - log_sum;
    }
}

void run_rows(ThreadTeam& team, RowsFn fn, const float* x, int64_t rows, int64_t cols,
              float* y) {
    if (rows <= 0 || cols <= 0) return;
    // An exp costs about ten multiply-adds.
    parallel_for(team, rows, grain_for(12 * cols), [&](int64_t begin, int64_t end) {
        fn(x + begin * cols, end - begin, cols, y + begin * cols);
    });
}

}  // namespace

void add_ops_softmax_scalar(KernelTable& t) {
    t.ops.softmax_rows = softmax_rows_scalar;
    t.ops.log_softmax_rows = log_softmax_rows_scalar;
}

void softmax(const KernelTable& k, ThreadTeam& team, const float* x, int64_t rows, int64_t cols,
             float* y) {
    run_rows(team, k.ops.softmax_rows, x, rows, cols, y);
}

void log_softmax(const KernelTable& k, ThreadTeam& team, const float* x, int64_t rows,
                 int64_t cols, float* y) {
    run_rows(team, k.ops.log_softmax_rows, x, rows, cols, y);
}

}  // namespace pk::kernels
