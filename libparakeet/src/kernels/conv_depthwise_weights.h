// Load-time preparation of depthwise convolution weights: BatchNorm folding and repacking
// from PyTorch's channel-major layout to the tap-major layout the conv kernels read.
#pragma once

#include <cstdint>

namespace pk::kernels {

// Repacks a depthwise weight from PyTorch layout [channels, 1, taps...] (Conv1d [C, 1, k]:
// taps = k; Conv2d [C, 1, 3, 3]: taps = 9, tap index = 3 * kh + kw) to tap-major
// packed[tap * channels + c], so the kernels read each tap's weights for a run of
// consecutive channels with one vector load.
void pack_depthwise_weight(const float* weight, int64_t channels, int64_t taps, float* packed);

// Folds an eval-mode BatchNorm that follows a depthwise convolution into the convolution:
// with s[c] = bn_weight[c] / sqrt(bn_var[c] + eps),
//   weight[c][j] <- weight[c][j] * s[c]
//   bias[c]      <- (bias[c] - bn_mean[c]) * s[c] + bn_bias[c]
// weight is [channels, taps] in PyTorch layout (fold first, then pack); bias is [channels]
// and holds the conv's own bias on entry, or zeros when the conv has none. PyTorch's
// BatchNorm eps is 1e-5. Computed in double, once at load.
void fold_batchnorm_into_depthwise(float* weight, float* bias, int64_t channels, int64_t taps,
                                   const float* bn_weight, const float* bn_bias,
                                   const float* bn_mean, const float* bn_var, float eps);

}  // namespace pk::kernels
