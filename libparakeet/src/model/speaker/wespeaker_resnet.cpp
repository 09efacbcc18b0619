#include "model/speaker/wespeaker_resnet.h"

#include <algorithm>
#include <string>

#include "common/errors.h"
#include "model/speaker/voicedetect_schema.h"

namespace pk::speaker {

namespace {

namespace vd = schema::voicedetect;

std::string required_string(const GgufReader& g, const TensorLoader& t, const char* key) {
    if (!g.has_key(key)) t.fail(std::string("missing key ") + key);
    return g.get_string(key);
}

std::vector<std::string> required_strings(const GgufReader& g, const TensorLoader& t, const char* key, size_t n) {
    if (!g.has_key(key)) t.fail(std::string("missing key ") + key);
    std::vector<std::string> v = g.get_string_array(key);
    if (v.size() != n)
        t.fail(std::string(key) + " lists " + std::to_string(v.size()) + " blocks, " + vd::kResnetConv1Weight +
               " " + std::to_string(n));
    return v;
}

}  // namespace

WespeakerResnet WespeakerResnet::load(const GgufReader& gguf, const TensorLoader& t, int64_t n_mels) {
    WespeakerResnet n;
    n.n_mels_ = n_mels;
    n.stem_ = Conv2dGemm::load_square(gguf, t, required_string(gguf, t, vd::kResnetStemWeight),
                               required_string(gguf, t, vd::kResnetStemBias), 1, 1);
    if (!gguf.has_key(vd::kResnetConv1Weight)) t.fail(std::string("missing key ") + vd::kResnetConv1Weight);
    const std::vector<std::string> conv1_w = gguf.get_string_array(vd::kResnetConv1Weight);
    const size_t count = conv1_w.size();
    const std::vector<std::string> conv1_b = required_strings(gguf, t, vd::kResnetConv1Bias, count);
    const std::vector<std::string> conv2_w = required_strings(gguf, t, vd::kResnetConv2Weight, count);
    const std::vector<std::string> conv2_b = required_strings(gguf, t, vd::kResnetConv2Bias, count);
    const std::vector<std::string> down_w = required_strings(gguf, t, vd::kResnetDownWeight, count);
    const std::vector<std::string> down_b = required_strings(gguf, t, vd::kResnetDownBias, count);
    if (!gguf.has_key(vd::kResnetStride)) t.fail(std::string("missing key ") + vd::kResnetStride);
    const std::vector<int64_t> strides = gguf.get_i64_array(vd::kResnetStride);
    if (strides.size() != count)
        t.fail(std::string(vd::kResnetStride) + " lists " + std::to_string(strides.size()) + " blocks, " +
               vd::kResnetConv1Weight + " " + std::to_string(count));
    if (count == 0) t.fail(std::string(vd::kResnetConv1Weight) + " lists no block");

    int64_t channels = n.stem_.out(), bins = n.stem_.out_f(n_mels);
    for (size_t i = 0; i < count; ++i) {
        if (strides[i] < 1 || strides[i] > 4)
            t.fail("block " + std::to_string(i) + ": stride " + std::to_string(strides[i]) + " is not 1 to 4");
        const int stride = static_cast<int>(strides[i]);
        Block b;
        b.conv1 = Conv2dGemm::load_square(gguf, t, conv1_w[i], conv1_b[i], channels, stride);
        b.conv2 = Conv2dGemm::load_square(gguf, t, conv2_w[i], conv2_b[i], b.conv1.out(), 1);
        b.has_down = !down_w[i].empty();
        if (b.has_down) {
            b.down = Conv2dGemm::load_square(gguf, t, down_w[i], down_b[i], channels, stride);
            if (b.down.out() != b.conv2.out() || b.down.out_f(bins) != b.conv1.out_f(bins))
                t.fail(down_w[i] + " does not give the shape of " + conv2_w[i]);
        } else if (stride != 1 || channels != b.conv2.out()) {
            t.fail("block " + std::to_string(i) + " changes the shape of its input and has no down convolution");
        }
        if (b.conv2.out_f(b.conv1.out_f(bins)) != b.conv1.out_f(bins))
            t.fail(conv2_w[i] + " changes the map's size");
        b.banded = runs_in_bands(b.residual());
        channels = b.conv2.out();
        bins = b.conv2.out_f(b.conv1.out_f(bins));
        n.blocks_.push_back(std::move(b));
    }
    if (bins < 1) t.fail(std::to_string(n_mels) + " mel bins leave no frequency bin to pool");

    const float var_eps = gguf.has_key(vd::kResnetVarEps) ? gguf.get_f32(vd::kResnetVarEps) : 1e-8f;
    n.head_ = StatsHead::load(gguf, t, required_string(gguf, t, vd::kResnetSegWeight),
                              required_string(gguf, t, vd::kResnetSegBias), channels, bins, n_mels, var_eps);
    const int64_t dim = n.head_.embedding_dim();
    const std::string mean_vec = gguf.has_key(vd::kResnetMeanVec) ? gguf.get_string(vd::kResnetMeanVec) : "";
    if (!mean_vec.empty()) n.mean_vec_ = t.f32(mean_vec, {dim});

    n.min_frames_ = 1;
    while (n.pooled_steps(n.min_frames_) < 2) ++n.min_frames_;
    return n;
}

int64_t WespeakerResnet::pooled_steps(int64_t T) const {
    T = stem_.out_t(T);
    for (const Block& b : blocks_) T = b.conv2.out_t(b.conv1.out_t(T));
    return T;
}

void WespeakerResnet::forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* out) const {
    ArenaScope scope(arena);
    // Four maps of the largest size any layer makes: the block's input, conv1's output,
    // conv2's output (the block's output) and the down conv's output.
    int64_t steps = stem_.out_t(T), bins = stem_.out_f(n_mels_), largest = steps * bins * stem_.out();
    for (const Block& b : blocks_) {
        steps = b.conv1.out_t(steps);
        bins = b.conv1.out_f(bins);
        largest = std::max(largest, steps * bins * b.conv2.out());
    }
    float* maps[4];
    for (float*& m : maps) m = arena.alloc_array<float>(static_cast<size_t>(largest));
    float *x = maps[0], *h = maps[1], *y = maps[2], *s = maps[3];

    // The features [T, n_mels] are the one-channel map [T, F = n_mels, 1].
    stem_.forward(team, arena, feats, T, n_mels_, x, /*relu=*/true);
    steps = stem_.out_t(T);
    bins = stem_.out_f(n_mels_);
    for (const Block& b : blocks_) {
        if (b.banded) {
            run_residual_block_in_bands(team, arena, b.residual(), x, steps, bins, y);
            steps = b.conv1.out_t(steps);
            bins = b.conv1.out_f(bins);
            std::swap(x, y);
            continue;
        }
        b.conv1.forward(team, arena, x, steps, bins, h, /*relu=*/true);
        const int64_t steps1 = b.conv1.out_t(steps), bins1 = b.conv1.out_f(bins);
        const float* shortcut = x;
        if (b.has_down) {
            b.down.forward(team, arena, x, steps, bins, s, /*relu=*/false);
            shortcut = s;
        }
        b.conv2.forward_add_relu(team, arena, h, steps1, bins1, shortcut, y);
        std::swap(x, y);
        steps = steps1;
        bins = bins1;
    }
    head_.forward(team, arena, x, steps, out);
    if (mean_vec_ != nullptr)
        for (int64_t i = 0; i < embedding_dim(); ++i) out[i] -= mean_vec_[i];
}

}  // namespace pk::speaker
