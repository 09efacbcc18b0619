// The AVX2/FMA implementations behind the ops kernels (ops_*_avx2.cpp). The portable entry
// points (ops_*.cpp) split the work across the team and call these only when
// cpu_features().has_avx2_fma_f16c(); nothing else should call them.
#pragma once

#include <cstdint>

namespace pk::kernels::avx2 {

void layer_norm_rows(const float* x, int64_t rows, int64_t cols, const float* weight,
                     const float* bias, float eps, float* y);
void softmax_rows(const float* x, int64_t rows, int64_t cols, float* y);
void log_softmax_rows(const float* x, int64_t rows, int64_t cols, float* y);
void silu(const float* x, int64_t n, float* y);
void glu_rows(const float* x, int64_t rows, int64_t channels, float* y);

}  // namespace pk::kernels::avx2
