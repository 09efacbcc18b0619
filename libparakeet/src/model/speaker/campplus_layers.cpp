#include "model/speaker/campplus_layers.h"

#include <cmath>

#include "common/errors.h"

namespace pk::speaker {

namespace {

// Below this many rows per thread a pass is not worth waking the team.
constexpr int64_t kMinRowsPerThread = 32;

}  // namespace

ChannelAffine ChannelAffine::fold(const TensorLoader& t, const std::string& what, const float* weight,
                                  const float* bias, const float* mean, const float* var, int64_t channels,
                                  float eps) {
    ChannelAffine a;
    a.kernels_ = &t.kernels();
    a.scale_.resize(static_cast<size_t>(channels));
    a.shift_.resize(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
        if (!(var[c] >= 0)) t.fail(what + " running variance has a negative or NaN value");
        const float scale = (weight ? weight[c] : 1.0f) / std::sqrt(var[c] + eps);
        a.scale_[c] = scale;
        a.shift_[c] = (bias ? bias[c] : 0.0f) - mean[c] * scale;
    }
    return a;
}

ChannelAffine ChannelAffine::load(const TensorLoader& t, const std::string& prefix, int64_t channels, float eps) {
    return fold(t, prefix, t.f32(prefix + ".weight", {channels}), t.f32(prefix + ".bias", {channels}),
                t.f32(prefix + ".running_mean", {channels}), t.f32(prefix + ".running_var", {channels}), channels,
                eps);
}

ChannelAffine ChannelAffine::load_statistics(const TensorLoader& t, const std::string& mean, const std::string& var,
                                             int64_t channels, float eps) {
    return fold(t, var, nullptr, nullptr, t.f32(mean, {channels}), t.f32(var, {channels}), channels, eps);
}

void ChannelAffine::apply(ThreadTeam& team, const float* x, int64_t T, int64_t ldx, float* y, int64_t ldy,
                          bool relu) const {
    auto* affine = kernels_->ops.affine_clamp_rows;
    for_rows(team, T, kMinRowsPerThread, [&](int64_t t0, int64_t t1) {
        affine(x + t0 * ldx, ldx, t1 - t0, channels(), scale_.data(), shift_.data(), relu,
               kernels::kReluCeiling, y + t0 * ldy, ldy);
    });
}

}  // namespace pk::speaker
