#include "model/speaker/conv2d_gemm.h"

#include <algorithm>

#include "common/errors.h"
#include "kernels/conv_pointwise.h"

namespace pk::speaker {

namespace {

// The unfolded band holds at most about this many floats (4 MiB): big enough for long GEMM
// tiles, small enough to stay in the last-level cache and to bound the scratch of long audio.
constexpr int64_t kBandValues = int64_t{1} << 20;
// The stem's one input channel stays on the direct product (9 inputs per row): Winograd's 16
// products of one input each would be all overhead.
constexpr int64_t kMinWinogradInputs = 2;

void clamp_at_zero(ThreadTeam& team, float* y, int64_t n) {
    parallel_for(team, n, 1 << 14, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = std::max(y[i], 0.0f);
    });
}

}  // namespace

Conv2dGemm Conv2dGemm::load(const GgufReader& gguf, const TensorLoader& t, const std::string& weight,
                            const std::string& bias, int64_t in, int stride) {
    const GgufTensor* w = gguf.find_tensor(weight);
    if (w == nullptr) t.fail("missing tensor " + weight);
    // ne [k, k, in, out], or [in, out] for a 1x1 weight stored as a matrix.
    const int64_t kernel = w->n_dims == 4 ? w->ne[0] : 1;
    const int64_t out = w->n_dims == 4 ? w->ne[3] : w->ne[1];
    if ((w->n_dims != 4 && w->n_dims != 2) || kernel % 2 == 0 || (w->n_dims == 4 && w->ne[1] != kernel))
        t.fail(weight + " has shape " + w->shape_string() + ", expected a square odd-kernel Conv2d weight");
    if (stride < 1) t.fail(weight + ": stride " + std::to_string(stride) + " is not positive");
    const GgufTensor& checked = t.get(weight, {out, in, kernel, kernel});
    Conv2dGemm c;
    if (kernel == 3 && stride == 1 && in >= kMinWinogradInputs && checked.type == GgmlType::F32)
        c.winograd_ = std::make_shared<const WinogradConv3x3>(reinterpret_cast<const float*>(checked.data), out, in,
                                                              t.level());
    else if (checked.type == GgmlType::F32) {
        // Columns in tap-major order, (i * kernel + j) * in + c, so that the unfolding copies
        // each tap's channels as one run.
        const int64_t taps = kernel * kernel, cols = in * taps;
        const float* w32 = reinterpret_cast<const float*>(checked.data);
        std::vector<float> tap_major(static_cast<size_t>(out * cols));
        for (int64_t o = 0; o < out; ++o)
            for (int64_t ch = 0; ch < in; ++ch)
                for (int64_t tap = 0; tap < taps; ++tap)
                    tap_major[o * cols + tap * in + ch] = w32[o * cols + ch * taps + tap];
        auto packed =
            std::make_shared<std::vector<float>>(static_cast<size_t>(kernels::pointwise_conv_packed_size(cols, out)));
        kernels::pointwise_conv_pack_weight(tap_major.data(), cols, out, packed->data());
        c.pointwise_ = std::move(packed);
    } else {
        c.weight_ = std::make_shared<const kernels::PackedWeights>(TensorLoader::weight_type(checked), checked.data,
                                                                   out, in * kernel * kernel, t.level());
    }
    c.kernels_ = &kernels::kernel_table(t.level());
    t.release(checked);
    c.bias_ = bias.empty() ? nullptr : t.f32(bias, {out});
    c.in_ = in;
    c.out_ = out;
    c.kernel_ = static_cast<int>(kernel);
    c.stride_ = stride;
    return c;
}

int64_t Conv2dGemm::output_size(int64_t n) const {
    const int64_t padded = n + 2 * ((kernel_ - 1) / 2);
    return padded < kernel_ ? 0 : (padded - kernel_) / stride_ + 1;
}

void Conv2dGemm::product(ThreadTeam& team, Arena& arena, const float* x, int64_t rows, float* y, bool relu) const {
    const int64_t cols = in_ * kernel_ * kernel_;
    if (pointwise_ != nullptr) {
        kernels::pointwise_conv(*kernels_, team, x, rows, cols, pointwise_->data(), out_, bias_, relu, y);
        return;
    }
    kernels::matmul(team, arena, x, rows, cols, *weight_, bias_, y, out_, kernels::MatmulPath::Gemm);
    if (relu) clamp_at_zero(team, y, rows * out_);
}

void Conv2dGemm::forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, float* y,
                         bool relu) const {
    if (winograd_ != nullptr) {
        winograd_->forward(team, arena, x, T, F, bias_, y, relu);
        return;
    }
    const int64_t To = output_size(T), Fo = output_size(F);
    if (kernel_ == 1 && stride_ == 1) {  // the map is the product's input as it is
        product(team, arena, x, T * F, y, relu);
        return;
    }
    ArenaScope scope(arena);
    const int64_t taps = static_cast<int64_t>(kernel_) * kernel_;
    const int64_t cols = in_ * taps;
    const int64_t pad = (kernel_ - 1) / 2;
    const int64_t band = std::max<int64_t>(1, kBandValues / (Fo * cols));
    float* unfolded = arena.alloc_array<float>(static_cast<size_t>(std::min(band, To) * Fo * cols));
    for (int64_t t0 = 0; t0 < To; t0 += band) {
        const int64_t steps = std::min(band, To - t0);
        parallel_for(team, steps * Fo, 64, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                const int64_t to = t0 + r / Fo, fo = r % Fo;
                float* row = unfolded + r * cols;
                for (int i = 0; i < kernel_; ++i) {      // frequency tap
                    const int64_t f = fo * stride_ + i - pad;
                    for (int j = 0; j < kernel_; ++j) {  // time tap
                        const int64_t t = to * stride_ + j - pad;
                        const bool outside = f < 0 || f >= F || t < 0 || t >= T;
                        const float* src = outside ? nullptr : x + (t * F + f) * in_;
                        const int tap = i * kernel_ + j;
                        if (pointwise_ != nullptr) {  // tap-major columns: one run per tap
                            float* dst = row + tap * in_;
                            if (outside)
                                std::fill_n(dst, in_, 0.0f);
                            else
                                std::copy_n(src, in_, dst);
                            continue;
                        }
                        float* dst = row + tap;  // PyTorch's channel-major columns
                        for (int64_t c = 0; c < in_; ++c) dst[c * taps] = outside ? 0.0f : src[c];
                    }
                }
            }
        });
        product(team, arena, unfolded, steps * Fo, y + t0 * Fo * out_, relu);
    }
}

}  // namespace pk::speaker
