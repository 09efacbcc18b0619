// The AVX2/FMA implementations behind the conv kernels (conv_*_avx2.cpp). The portable entry
// points (conv_*.cpp) split the work across the team and call these only when
// cpu_features().has_avx2_fma_f16c(); nothing else should call them. Each computes the
// output rows [t_begin, t_end) (time rows, or pixel rows for the pointwise conv).
#pragma once

#include <cstdint>

namespace pk::kernels::avx2 {

void depthwise_conv1d_rows(const float* x, int64_t T, int64_t C, const float* packed_weight,
                           int64_t kernel, const float* bias, int64_t t_begin, int64_t t_end,
                           float* y);

void conv2d_3x3_s2_single_channel_rows(const float* x, int64_t T, int64_t F,
                                       const float* packed_weight, const float* bias,
                                       int64_t C, bool relu, int64_t t_begin, int64_t t_end,
                                       float* y);

void depthwise_conv2d_3x3_s2_rows(const float* x, int64_t T, int64_t F, int64_t C,
                                  const float* packed_weight, const float* bias,
                                  int64_t t_begin, int64_t t_end, float* y);

void pointwise_conv_rows(const float* x, int64_t cin, const float* packed_weight, int64_t cout,
                         const float* bias, bool relu, int64_t row_begin, int64_t row_end,
                         float* y);

}  // namespace pk::kernels::avx2
