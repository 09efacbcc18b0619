// The per-channel layers of 3D-Speaker's CAM++ (campplus.h; its convolutions are conv2d_gemm.h's),
// on channel-innermost activations: frame t's channel c at x[t * ld + c].
//
//   ChannelAffine  a BatchNorm in eval mode folded into one scale and shift per channel.
//
// Every output element is computed by one thread with the same code, so results are bitwise
// identical for any team size at a given ISA level.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_table.h"
#include "model/tensor_loader.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

// Runs fn(first, last) over [0, rows) split into one contiguous range per thread (fewer when a
// range would have under `min_rows` rows). Each row is processed by one thread with the same
// code, whatever the split.
template <class Fn>
void for_rows(ThreadTeam& team, int64_t rows, int64_t min_rows, Fn&& fn) {
    const int64_t parts = std::min<int64_t>(team.size(), std::max<int64_t>(1, rows / min_rows));
    if (parts == 1) {
        fn(int64_t{0}, rows);
        return;
    }
    team.run([&](int ith, int) {
        if (ith < parts) fn(rows * ith / parts, rows * (ith + 1) / parts);
    });
}

class ChannelAffine {
public:
    ChannelAffine() = default;
    // BatchNorm `<prefix>.{weight,bias,running_mean,running_var}`, each [channels], F32.
    static ChannelAffine load(const TensorLoader& t, const std::string& prefix, int64_t channels, float eps);
    // An affine-free BatchNorm from its statistics alone (weight 1, bias 0).
    static ChannelAffine load_statistics(const TensorLoader& t, const std::string& mean, const std::string& var,
                                         int64_t channels, float eps);

    int64_t channels() const { return static_cast<int64_t>(scale_.size()); }
    // y[t * ldy + c] = x[t * ldx + c] * scale[c] + shift[c] (then max(., 0) when `relu`), for
    // t < T, c < channels, split over the team by frames; y may be x.
    void apply(ThreadTeam& team, const float* x, int64_t T, int64_t ldx, float* y, int64_t ldy, bool relu) const;

private:
    static ChannelAffine fold(const TensorLoader& t, const std::string& what, const float* weight, const float* bias,
                              const float* mean, const float* var, int64_t channels, float eps);

    std::vector<float> scale_, shift_;
    const kernels::KernelTable* kernels_ = nullptr;  // the level's affine_clamp_rows
};

}  // namespace pk::speaker
