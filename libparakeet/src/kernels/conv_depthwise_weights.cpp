#include "kernels/conv_depthwise_weights.h"

#include <cmath>

namespace pk::kernels {

void pack_depthwise_weight(const float* weight, int64_t channels, int64_t taps, float* packed) {
    for (int64_t c = 0; c < channels; ++c)
        for (int64_t j = 0; j < taps; ++j) packed[j * channels + c] = weight[c * taps + j];
}

void fold_batchnorm_into_depthwise(float* weight, float* bias, int64_t channels, int64_t taps,
                                   const float* bn_weight, const float* bn_bias,
                                   const float* bn_mean, const float* bn_var, float eps) {
    for (int64_t c = 0; c < channels; ++c) {
        const double s = static_cast<double>(bn_weight[c]) /
                         std::sqrt(static_cast<double>(bn_var[c]) + static_cast<double>(eps));
        for (int64_t j = 0; j < taps; ++j)
            weight[c * taps + j] = static_cast<float>(weight[c * taps + j] * s);
        bias[c] = static_cast<float>((static_cast<double>(bias[c]) - bn_mean[c]) * s + bn_bias[c]);
    }
}

}  // namespace pk::kernels
