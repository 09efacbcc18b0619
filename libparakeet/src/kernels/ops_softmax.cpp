#include "kernels/ops_softmax.h"

#include <cmath>
#include <limits>

#include "kernels/ops_avx2.h"
#include "kernels/ops_avx512.h"
#include "kernels/ops_grain.h"
#include "runtime/cpu_features.h"

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

using RowsFn = void (*)(const float*, int64_t, int64_t, float*);

void run_rows(ThreadTeam& team, RowsFn fn, const float* x, int64_t rows, int64_t cols,
              float* y) {
    if (rows <= 0 || cols <= 0) return;
    // An exp costs about ten multiply-adds.
    parallel_for(team, rows, grain_for(12 * cols), [&](int64_t begin, int64_t end) {
        fn(x + begin * cols, end - begin, cols, y + begin * cols);
    });
}

RowsFn softmax_rows_fn() {
#if defined(PARAKEET_HAVE_X86)
    if (cpu_features().has_avx512()) return &avx512::softmax_rows;
    if (cpu_features().has_avx2_fma_f16c()) return &avx2::softmax_rows;
#endif
    return &softmax_rows_scalar;
}

RowsFn log_softmax_rows_fn() {
#if defined(PARAKEET_HAVE_X86)
    if (cpu_features().has_avx512()) return &avx512::log_softmax_rows;
    if (cpu_features().has_avx2_fma_f16c()) return &avx2::log_softmax_rows;
#endif
    return &log_softmax_rows_scalar;
}

}  // namespace

void softmax(ThreadTeam& team, const float* x, int64_t rows, int64_t cols, float* y) {
    run_rows(team, softmax_rows_fn(), x, rows, cols, y);
}

void softmax_serial(const float* x, int64_t rows, int64_t cols, float* y) {
    if (rows > 0 && cols > 0) softmax_rows_fn()(x, rows, cols, y);
}

void log_softmax(ThreadTeam& team, const float* x, int64_t rows, int64_t cols, float* y) {
    run_rows(team, log_softmax_rows_fn(), x, rows, cols, y);
}

}  // namespace pk::kernels
