#include "model/speaker/conv2d_gemm.h"

#include <algorithm>
#include <stdexcept>

#include "common/errors.h"
#include "kernels/conv_pointwise.h"
#include "kernels/conv_subsampling.h"
#include "kernels/quantize_q8_0.h"
#include "model/layers/q8_at_load.h"

namespace pk::speaker {

namespace {

// The unfolded band holds at most about this many floats (4 MiB): big enough for long GEMM
// tiles, small enough to stay in the last-level cache and to bound the scratch of long audio.
constexpr int64_t kBandValues = int64_t{1} << 20;
// A band has at least this many rows, however wide they are.
constexpr int64_t kMinBandRows = 64;
// Rows per chunk of the team's share of an unfolding or a copy.
constexpr int64_t kCopyGrain = 64;
// The stem's one input channel takes the direct kernel: Winograd's 36 products of one input
// each would be all overhead.
constexpr int64_t kMinWinogradInputs = 2;

// dst[r * ldd + c] = src[r * lds + c] for r < rows, c < cols.
void copy_rows(ThreadTeam& team, const float* src, int64_t lds, float* dst, int64_t ldd, int64_t rows, int64_t cols) {
    parallel_for(team, rows, kCopyGrain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) std::copy_n(src + r * lds, cols, dst + r * ldd);
    });
}

// y[r * ldy + o] = max(y[r * ldy + o], 0) for r < rows, o < cols: the ReLU after a matmul, which
// has no epilogue for it.
void clamp_at_zero(const kernels::KernelTable& k, ThreadTeam& team, float* y, int64_t rows, int64_t cols,
                   int64_t ldy) {
    parallel_for(team, rows, kCopyGrain, [&](int64_t begin, int64_t end) {
        k.ops.affine_clamp_rows(y + begin * ldy, ldy, end - begin, cols, nullptr, nullptr, true, kernels::kReluCeiling,
                                y + begin * ldy, ldy);
    });
}

// x[i] = max(x[i] + s[i], 0) for i < n.
void add_relu(const kernels::KernelTable& k, ThreadTeam& team, float* x, const float* s, int64_t n) {
    parallel_for(team, n, 1 << 14, [&](int64_t begin, int64_t end) {
        k.ops.add_clamp(x + begin, s + begin, end - begin, kernels::kReluCeiling, x + begin);
    });
}

// Rows per band of the unfolded input, of cols values each, for `positions` output positions.
int64_t band_rows(int64_t positions, int64_t cols) {
    return std::min(positions, std::max(kMinBandRows, kBandValues / cols));
}

}  // namespace

KernelShape kernel_shape(const GgufReader& gguf, const TensorLoader& t, const std::string& name) {
    const GgufTensor* w = gguf.find_tensor(name);
    if (w == nullptr) t.fail("missing tensor " + name);
    switch (w->n_dims) {
    case 2: return {w->ne[1], w->ne[0], 1, 1};
    case 3: return {w->ne[2], w->ne[1], 1, static_cast<int>(w->ne[0])};
    case 4: return {w->ne[3], w->ne[2], static_cast<int>(w->ne[1]), static_cast<int>(w->ne[0])};
    default: t.fail(name + " has shape " + w->shape_string() + ", expected a convolution weight");
    }
}

Conv2dGemm Conv2dGemm::load(const GgufReader& gguf, const TensorLoader& t, const std::string& weight,
                            const std::string& bias, int64_t in, ConvGeometry geometry) {
    const KernelShape s = kernel_shape(gguf, t, weight);
    if (s.out < 1 || s.kf < 1 || s.kt < 1) t.fail(weight + " has an empty kernel");
    const ConvGeometry& g = geometry;
    if (g.stride_t < 1 || g.stride_f < 1 || g.dilation_t < 1 || g.pad_t < 0 || g.pad_f < 0)
        t.fail(weight + ": stride " + std::to_string(g.stride_t) + "x" + std::to_string(g.stride_f) + ", dilation " +
               std::to_string(g.dilation_t) + " or padding " + std::to_string(g.pad_t) + "x" + std::to_string(g.pad_f) +
               " is out of range");
    // The input channels checked, the expected shape told in the stored rank.
    const int rank = gguf.find_tensor(weight)->n_dims;
    const GgufTensor& checked = rank == 2   ? t.get(weight, {s.out, in})
                                : rank == 3 ? t.get(weight, {s.out, in, s.kt})
                                            : t.get(weight, {s.out, in, s.kf, s.kt});
    const int64_t taps = static_cast<int64_t>(s.kf) * s.kt, cols = in * taps;
    Conv2dGemm c;
    const bool winograd_shape = s.kf == 3 && s.kt == 3 && g.stride_t == 1 && g.stride_f == 1 && g.pad_t == 1 &&
                                g.pad_f == 1 && g.dilation_t == 1 && in >= kMinWinogradInputs;
    const bool stem_shape = in == 1 && s.kf == 3 && s.kt == 3 && g.stride_t == g.stride_f &&
                            (g.stride_t == 1 || g.stride_t == 2) && g.pad_t == 1 && g.pad_f == 1 &&
                            g.dilation_t == 1 && !bias.empty();
    if (checked.type == GgmlType::F32 && stem_shape) {
        // The kernel's tap 3 i + j reads row (time) i and column (frequency) j; PyTorch's
        // [out, 1, kf, kt] has frequency first.
        const float* w32 = reinterpret_cast<const float*>(checked.data);
        auto packed = std::make_shared<std::vector<float>>(static_cast<size_t>(9 * s.out));
        for (int64_t o = 0; o < s.out; ++o)
            for (int i = 0; i < 3; ++i)      // time
                for (int j = 0; j < 3; ++j)  // frequency
                    (*packed)[(3 * i + j) * s.out + o] = w32[o * 9 + j * 3 + i];
        c.stem_ = std::move(packed);
    } else if (checked.type == GgmlType::F32 && winograd_shape) {
        // A quantised file's Winograd products run on int8 where that pays (winograd_conv3x3.h).
        const bool q8 = t.q8_at_load() && in % kernels::kQ8_0BlockValues == 0 && WinogradConv3x3::int8_pays(t.level());
        c.winograd_ = std::make_shared<const WinogradConv3x3>(
            reinterpret_cast<const float*>(checked.data), s.out, in, t.level(),
            q8 ? WinogradConv3x3::Products::Q8_0 : WinogradConv3x3::Products::F32);
    } else if (checked.type == GgmlType::F32) {
        // Columns in tap-major order, (i * kt + j) * in + c, so that the unfolding copies each
        // tap's channels as one run.
        const float* w32 = reinterpret_cast<const float*>(checked.data);
        std::vector<float> tap_major(static_cast<size_t>(s.out * cols));
        for (int64_t o = 0; o < s.out; ++o)
            for (int64_t ch = 0; ch < in; ++ch)
                for (int64_t tap = 0; tap < taps; ++tap)
                    tap_major[o * cols + tap * in + ch] = w32[o * cols + ch * taps + tap];
        c.tap_major_ = true;
        // A quantised file's F32 convolution (voice-detect.cpp keeps the wider kernels F32) runs
        // on the int8 kernels where its rows are whole Q8_0 blocks (LoadOptions::q8_all). (A
        // Winograd one took the branch above: direct int8 products of it measured slower than
        // its 4x fewer f32 ones.)
        if (t.q8_at_load() && cols % kernels::kQ8_0BlockValues == 0) {
            c.weight_ = std::make_shared<const kernels::PackedWeights>(
                q8_0_at_load(tap_major.data(), s.out, cols, t.level()));
        } else {
            auto packed = std::make_shared<std::vector<float>>(
                static_cast<size_t>(kernels::pointwise_conv_packed_size(cols, s.out)));
            kernels::pointwise_conv_pack_weight(tap_major.data(), cols, s.out, packed->data());
            c.pointwise_ = std::move(packed);
        }
    } else {
        const kernels::WeightType type = TensorLoader::weight_type(checked);
        if (cols % kernels::weight_block_values(type) != 0)
            t.fail(weight + ": rows of " + std::to_string(cols) + " weights are not whole blocks of its type");
        c.weight_ = std::make_shared<const kernels::PackedWeights>(type, checked.data, s.out, cols, t.level());
    }
    t.release(checked);
    c.q8_map_ = c.weight_ != nullptr && kernels::q8_blocks_are_taps(*c.weight_, c.tap_major_, taps, in);
    c.kernels_ = &t.kernels();
    c.bias_ = bias.empty() ? nullptr : t.f32(bias, {s.out});
    c.in_ = in;
    c.out_ = s.out;
    c.kf_ = s.kf;
    c.kt_ = s.kt;
    c.g_ = geometry;
    return c;
}

Conv2dGemm Conv2dGemm::load_square(const GgufReader& gguf, const TensorLoader& t, const std::string& weight,
                                   const std::string& bias, int64_t in, int stride) {
    const KernelShape s = kernel_shape(gguf, t, weight);
    if (s.kf != s.kt || s.kt % 2 == 0)
        t.fail(weight + " has a " + std::to_string(s.kf) + "x" + std::to_string(s.kt) +
               " kernel, expected a square odd-kernel Conv2d weight");
    const int pad = (s.kt - 1) / 2;
    return load(gguf, t, weight, bias, in, {stride, stride, pad, pad, 1});
}

bool Conv2dGemm::one_to_one() const {
    return kf_ == 1 && kt_ == 1 && g_.stride_t == 1 && g_.stride_f == 1 && g_.pad_t == 0 && g_.pad_f == 0;
}

bool Conv2dGemm::pointwise_map(int64_t ldx) const { return one_to_one() && ldx == in_; }

int64_t Conv2dGemm::tap_source(int64_t to, int64_t fo, int i, int j, int64_t T, int64_t F) const {
    const int64_t f = fo * g_.stride_f + i - g_.pad_f;
    const int64_t t = to * g_.stride_t + static_cast<int64_t>(j) * g_.dilation_t - g_.pad_t;
    return f < 0 || f >= F || t < 0 || t >= T ? -1 : t * F + f;
}

void Conv2dGemm::product(ThreadTeam& team, Arena& arena, const float* x, int64_t rows, float* y, int64_t ldy,
                         bool relu) const {
    const int64_t cols = in_ * kf_ * kt_;
    if (pointwise_ != nullptr) {  // writes rows of out_: forward() hands it ldy == out_
        kernels::pointwise_conv(*kernels_, team, x, rows, cols, pointwise_->data(), out_, bias_, relu, y);
        return;
    }
    kernels::matmul(team, arena, x, rows, cols, *weight_, bias_, y, ldy, kernels::MatmulPath::Gemm);
    if (relu) clamp_at_zero(*kernels_, team, y, rows, out_, ldy);
}

void Conv2dGemm::unfold(ThreadTeam& team, const float* x, int64_t T, int64_t F, int64_t ldx, int64_t first,
                        int64_t rows, float* cols) const {
    const int64_t Fo = out_f(F), taps = static_cast<int64_t>(kf_) * kt_, width = in_ * taps;
    parallel_for(team, rows, kCopyGrain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t to = (first + r) / Fo, fo = (first + r) % Fo;
            float* row = cols + r * width;
            for (int i = 0; i < kf_; ++i) {      // frequency tap
                for (int j = 0; j < kt_; ++j) {  // time tap
                    const int64_t at = tap_source(to, fo, i, j, T, F);
                    const bool outside = at < 0;
                    const float* src = outside ? nullptr : x + at * ldx;
                    const int64_t tap = static_cast<int64_t>(i) * kt_ + j;
                    if (tap_major_) {  // one run per tap
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
}

void Conv2dGemm::tap_sources(ThreadTeam& team, int64_t T, int64_t F, int64_t first, int64_t rows,
                             int64_t* sources) const {
    const int64_t Fo = out_f(F), taps = static_cast<int64_t>(kf_) * kt_;
    parallel_for(team, rows, kCopyGrain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t to = (first + r) / Fo, fo = (first + r) % Fo;
            for (int i = 0; i < kf_; ++i)
                for (int j = 0; j < kt_; ++j) sources[r * taps + i * kt_ + j] = tap_source(to, fo, i, j, T, F);
        }
    });
}

void Conv2dGemm::forward_q8_map(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, int64_t ldx,
                                float* y, int64_t ldy, bool relu) const {
    const int64_t positions = out_t(T) * out_f(F), cols = in_ * kf_ * kt_;
    const kernels::Q8Rows map = kernels::alloc_q8_rows(arena, T * F, in_);
    kernels::quantize_q8_rows(weight_->level(), team, x, T * F, in_, ldx, map);
    if (one_to_one()) {  // the map is the rows
        kernels::matmul_q8_rows(team, arena, map, positions, cols, *weight_, bias_, y, ldy);
    } else {
        const int64_t band = band_rows(positions, cols);
        int64_t* sources = arena.alloc_array<int64_t>(static_cast<size_t>(band * kf_ * kt_));
        for (int64_t r0 = 0; r0 < positions; r0 += band) {
            const int64_t rows = std::min(band, positions - r0);
            tap_sources(team, T, F, r0, rows, sources);
            kernels::matmul_q8_gather(team, arena, {map, in_, sources}, rows, cols, *weight_, bias_, y + r0 * ldy, ldy);
        }
    }
    if (relu) clamp_at_zero(*kernels_, team, y, positions, out_, ldy);
}

void Conv2dGemm::forward(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F, int64_t ldx, float* y,
                         int64_t ldy, bool relu) const {
    const int64_t positions = out_t(T) * out_f(F);
    if (positions == 0) return;
    ArenaScope scope(arena);
    // The Winograd and pointwise kernels write rows of out_: a wider y takes them through a copy.
    const bool staged = ldy != out_ && weight_ == nullptr;
    float* dst = staged ? arena.alloc_array<float>(static_cast<size_t>(positions * out_)) : y;
    const int64_t ld = staged ? out_ : ldy;
    if (winograd_ != nullptr || stem_ != nullptr) {
        const float* src = x;
        if (ldx != in_) {  // these kernels read rows of in_
            float* packed = arena.alloc_array<float>(static_cast<size_t>(T * F * in_));
            copy_rows(team, x, ldx, packed, in_, T * F, in_);
            src = packed;
        }
        if (stem_ != nullptr)
            kernels::conv2d_3x3_single_channel(*kernels_, team, src, T, F, g_.stride_t, stem_->data(), bias_, out_,
                                               relu, dst);
        else
            winograd_->forward(team, arena, src, T, F, bias_, nullptr, dst, relu);
    } else if (pointwise_map(ldx)) {
        product(team, arena, x, positions, dst, ld, relu);
    } else if (q8_map_ && 2 * positions * kf_ * kt_ >= T * F) {
        // Quantising the map pays where the unfolded rows hold at least half its values (a float
        // unfolding copies more than the int8 gather does), as measured on CAM++'s head shortcut,
        // 1x1 with stride 2 along F (half the map); ERes2Net's, stride 2 along both (a quarter),
        // unfolds floats: on the map route its q8_0 took 2-5 % more CPU than before, this way
        // 4-8 % less (docs/performance.md, "The speaker encoders").
        forward_q8_map(team, arena, x, T, F, ldx, dst, ld, relu);
    } else {
        const int64_t cols = in_ * kf_ * kt_, band = band_rows(positions, cols);
        float* unfolded = arena.alloc_array<float>(static_cast<size_t>(band * cols));
        for (int64_t r0 = 0; r0 < positions; r0 += band) {
            const int64_t rows = std::min(band, positions - r0);
            unfold(team, x, T, F, ldx, r0, rows, unfolded);
            product(team, arena, unfolded, rows, dst + r0 * ld, ld, relu);
        }
    }
    if (staged) copy_rows(team, dst, out_, y, ldy, positions, out_);
}

void Conv2dGemm::forward_add_relu(ThreadTeam& team, Arena& arena, const float* x, int64_t T, int64_t F,
                                  const float* residual, float* y) const {
    if (winograd_ != nullptr) {
        if (out_t(T) * out_f(F) == 0) return;
        winograd_->forward(team, arena, x, T, F, bias_, residual, y, /*relu=*/true);
        return;
    }
    forward(team, arena, x, T, F, y, /*relu=*/false);
    add_relu(*kernels_, team, y, residual, out_t(T) * out_f(F) * out_);
}

void Conv2dGemm::forward_rows(ThreadTeam& team, Arena& arena, const float* x, int64_t t_begin, int64_t t_end,
                              int64_t rows, int64_t F, const float* residual, float* y, bool relu) const {
    if (winograd_ == nullptr) throw std::logic_error("Conv2dGemm::forward_rows: the convolution is not a Winograd one");
    if (rows > 0) winograd_->forward_rows(team, arena, x, t_begin, t_end, rows, F, bias_, residual, y, relu);
}

}  // namespace pk::speaker
