// The AVX-512 implementations behind the ops kernels (ops_*_avx512.cpp). The portable entry
// points (ops_*.cpp) split the work across the team and call these only when
// cpu_features().has_avx512(); nothing else should call them. Same contracts as ops_avx2.h.
#pragma once

#include <cstdint>

namespace pk::kernels::avx512 {

void softmax_rows(const float* x, int64_t rows, int64_t cols, float* y);
void log_softmax_rows(const float* x, int64_t rows, int64_t cols, float* y);
void silu(const float* x, int64_t n, float* y);
void glu_rows(const float* x, int64_t rows, int64_t channels, float* y);

}  // namespace pk::kernels::avx512
