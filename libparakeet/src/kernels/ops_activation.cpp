#include "kernels/ops_activation.h"

#include <cmath>

#include "kernels/kernel_table.h"
#include "kernels/ops_grain.h"

namespace pk::kernels {
namespace {

void silu_scalar(const float* x, int64_t n, float* y) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void sigmoid_scalar(const float* x, int64_t n, float* y) {
    for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

void gelu_erf_scalar(const float* x, int64_t n, float* y) {
    for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.f + std::erf(x[i] * 0.70710678118654752f));
}

void glu_rows_scalar(const float* x, int64_t rows, int64_t channels, float* y) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* a = x + r * 2 * channels;
        const float* g = a + channels;
        float* yr = y + r * channels;
        for (int64_t c = 0; c < channels; ++c) yr[c] = a[c] / (1.0f + std::exp(-g[c]));
    }
}

// An exp and a division cost about fifteen multiply-adds; GELU's erfc adds ten more.
constexpr int64_t kSigmoidWork = 16;
constexpr int64_t kGeluWork = 26;

}  // namespace

void add_ops_activation_scalar(KernelTable& t) {
    t.ops.silu = silu_scalar;
    t.ops.sigmoid = sigmoid_scalar;
    t.ops.gelu_erf = gelu_erf_scalar;
    t.ops.glu_rows = glu_rows_scalar;
}

// SiLU and ReLU split the flat element range, not rows: each element is computed by the same
// vector code wherever a chunk boundary falls (the AVX2 tail is masked, not scalar).
void silu(const KernelTable& k, ThreadTeam& team, const float* x, int64_t n, float* y) {
    auto* fn = k.ops.silu;
    parallel_for(team, n, grain_for(kSigmoidWork),
                 [&](int64_t begin, int64_t end) { fn(x + begin, end - begin, y + begin); });
}

void sigmoid(const KernelTable& k, ThreadTeam& team, const float* x, int64_t n, float* y) {
    auto* fn = k.ops.sigmoid;
    parallel_for(team, n, grain_for(kSigmoidWork),
                 [&](int64_t begin, int64_t end) { fn(x + begin, end - begin, y + begin); });
}

void gelu_erf(const KernelTable& k, ThreadTeam& team, const float* x, int64_t n, float* y) {
    auto* fn = k.ops.gelu_erf;
    parallel_for(team, n, grain_for(kGeluWork), [&](int64_t begin, int64_t end) { fn(x + begin, end - begin, y + begin); });
}

void relu(ThreadTeam& team, const float* x, int64_t n, float* y) {
    // Memory-bound: the compiler's vectorisation of this loop is as fast as hand-written AVX2.
    parallel_for(team, n, grain_for(1), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
    });
}

void glu(const KernelTable& k, ThreadTeam& team, const float* x, int64_t rows, int64_t channels,
         float* y) {
    if (channels <= 0) return;
    auto* fn = k.ops.glu_rows;
    parallel_for(team, rows, grain_for(kSigmoidWork * channels), [&](int64_t begin, int64_t end) {
        fn(x + begin * 2 * channels, end - begin, channels, y + begin * channels);
    });
}

}  // namespace pk::kernels
