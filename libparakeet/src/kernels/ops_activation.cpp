#include "kernels/ops_activation.h"

#include <cmath>

#include "kernels/ops_avx2.h"
#include "kernels/ops_avx512.h"
#include "kernels/ops_grain.h"
#include "runtime/cpu_features.h"

namespace pk::kernels {
namespace {

void silu_scalar(const float* x, int64_t n, float* y) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void glu_rows_scalar(const float* x, int64_t rows, int64_t channels, float* y) {
    for (int64_t r = 0; r < rows; ++r) {
        const float* a = x + r * 2 * channels;
        const float* g = a + channels;
        float* yr = y + r * channels;
        for (int64_t c = 0; c < channels; ++c) yr[c] = a[c] / (1.0f + std::exp(-g[c]));
    }
}

// An exp and a division cost about fifteen multiply-adds.
constexpr int64_t kSigmoidWork = 16;

}  // namespace

// SiLU and ReLU split the flat element range, not rows: each element is computed by the same
// vector code wherever a chunk boundary falls (the AVX2 tail is masked, not scalar).
void silu(ThreadTeam& team, const float* x, int64_t n, float* y) {
    auto* fn = &silu_scalar;
#if defined(PARAKEET_HAVE_X86)
    if (cpu_features().has_avx512()) fn = &avx512::silu;
    else if (cpu_features().has_avx2_fma_f16c()) fn = &avx2::silu;
#endif
    parallel_for(team, n, grain_for(kSigmoidWork),
                 [&](int64_t begin, int64_t end) { fn(x + begin, end - begin, y + begin); });
}

void relu(ThreadTeam& team, const float* x, int64_t n, float* y) {
    // Memory-bound: the compiler's vectorisation of this loop is as fast as hand-written AVX2.
    parallel_for(team, n, grain_for(1), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
    });
}

void glu(ThreadTeam& team, const float* x, int64_t rows, int64_t channels, float* y) {
    if (channels <= 0) return;
    auto* fn = &glu_rows_scalar;
#if defined(PARAKEET_HAVE_X86)
    if (cpu_features().has_avx512()) fn = &avx512::glu_rows;
    else if (cpu_features().has_avx2_fma_f16c()) fn = &avx2::glu_rows;
#endif
    parallel_for(team, rows, grain_for(kSigmoidWork * channels), [&](int64_t begin, int64_t end) {
        fn(x + begin * 2 * channels, end - begin, channels, y + begin * channels);
    });
}

}  // namespace pk::kernels
