#include "model/encoder/conformer_layer.h"

#include <algorithm>

#include "kernels/attention_local_rel_pos.h"
#include "kernels/attention_rel_pos.h"
#include "kernels/attention_windowed_rel_pos.h"
#include "kernels/conv_depthwise1d.h"
#include "kernels/conv_depthwise_weights.h"
#include "kernels/ops_activation.h"
#include "kernels/ops_elementwise.h"
#include "kernels/ops_layer_norm.h"
#include "model/gguf_schema.h"

namespace pk {
namespace {

constexpr float kBatchNormEps = 1e-5f;

}  // namespace

LayerNormWeights LayerNormWeights::load(const TensorLoader& t, const std::string& prefix, int64_t dim) {
    return {t.f32(schema::weight(prefix), {dim}), t.f32(schema::bias(prefix), {dim})};
}

ConformerLayer::ConformerLayer(const TensorLoader& t, const EncoderConfig& cfg, int index)
    : d_model_(cfg.d_model),
      n_heads_(cfg.n_heads),
      ff_dim_(cfg.ff_dim),
      kernel_(cfg.conv_kernel),
      conv_layer_norm_(!cfg.conv_norm_is_batch_norm),
      causal_conv_(cfg.causal_conv),
      kernels_(&t.kernels()) {
    const auto p = [index](const char* module) { return schema::layer_module(index, module); };
    const int64_t d = d_model_, ff = ff_dim_, dk = cfg.head_dim();
    const bool bias = cfg.use_bias;

    norm_ff1_ = LayerNormWeights::load(t, p(schema::kNormFeedForward1), d);
    ff1_linear1_ = Linear::load(t, p(schema::kFeedForward1Linear1), ff, d, bias);
    ff1_linear2_ = Linear::load(t, p(schema::kFeedForward1Linear2), d, ff, bias);

    norm_att_ = LayerNormWeights::load(t, p(schema::kNormSelfAtt), d);
    if (t.has(schema::weight(p(schema::kAttnWQkv)))) {  // parakeet.cpp's diarization files: fused
        q_ = Linear::load_rows(t, p(schema::kAttnWQkv), 0, d, 3 * d, d);
        k_ = Linear::load_rows(t, p(schema::kAttnWQkv), d, d, 3 * d, d);
        v_ = Linear::load_rows(t, p(schema::kAttnWQkv), 2 * d, d, 3 * d, d);
        out_ = Linear::load(t, p(schema::kAttnOutProj), d, d, bias);
    } else {
        q_ = Linear::load(t, p(schema::kSelfAttnLinearQ), d, d, bias);
        k_ = Linear::load(t, p(schema::kSelfAttnLinearK), d, d, bias);
        v_ = Linear::load(t, p(schema::kSelfAttnLinearV), d, d, bias);
        out_ = Linear::load(t, p(schema::kSelfAttnLinearOut), d, d, bias);
    }
    pos_ = Linear::load(t, p(schema::kSelfAttnLinearPos), d, d, false);
    pos_bias_u_ = t.f32(p(schema::kSelfAttnPosBiasU), {n_heads_, dk});
    pos_bias_v_ = t.f32(p(schema::kSelfAttnPosBiasV), {n_heads_, dk});

    norm_conv_ = LayerNormWeights::load(t, p(schema::kNormConv), d);
    pointwise1_ = Linear::load(t, p(schema::kConvPointwise1), 2 * d, d, bias);
    pointwise2_ = Linear::load(t, p(schema::kConvPointwise2), d, d, bias);
    // Depthwise weights are folded with the BatchNorm (eval: a per-channel affine map), then
    // packed tap-major for the kernel. Done once here.
    const float* dw = t.f32(schema::weight(p(schema::kConvDepthwise)), {d, 1, kernel_});
    std::vector<float> w(dw, dw + d * kernel_);
    depthwise_b_.assign(static_cast<size_t>(d), 0.0f);
    if (const float* b = t.optional_f32(schema::bias(p(schema::kConvDepthwise)), {d}))
        depthwise_b_.assign(b, b + d);
    const std::string bn = p(schema::kConvNorm);
    if (conv_layer_norm_) {
        conv_norm_ = LayerNormWeights::load(t, bn, d);
    } else {
        kernels::fold_batchnorm_into_depthwise(w.data(), depthwise_b_.data(), d, kernel_,
                                               t.f32(schema::weight(bn), {d}), t.f32(schema::bias(bn), {d}),
                                               t.f32(schema::running_mean(bn), {d}),
                                               t.f32(schema::running_var(bn), {d}), kBatchNormEps);
    }
    depthwise_w_.resize(w.size());
    kernels::pack_depthwise_weight(w.data(), d, kernel_, depthwise_w_.data());

    norm_ff2_ = LayerNormWeights::load(t, p(schema::kNormFeedForward2), d);
    ff2_linear1_ = Linear::load(t, p(schema::kFeedForward2Linear1), ff, d, bias);
    ff2_linear2_ = Linear::load(t, p(schema::kFeedForward2Linear2), d, ff, bias);
    norm_out_ = LayerNormWeights::load(t, p(schema::kNormOut), d);
}

size_t ConformerLayer::packed_bytes() const {
    size_t n = (depthwise_w_.size() + depthwise_b_.size()) * sizeof(float);
    for (const Linear* l : {&ff1_linear1_, &ff1_linear2_, &ff2_linear1_, &ff2_linear2_, &q_, &k_, &v_,
                            &out_, &pos_, &pointwise1_, &pointwise2_})
        n += l->packed_bytes();
    return n;
}

namespace {

// Calls body(r0, r1) for the chunks [r0, r1) of [0, T), then tells `progress` how far it got.
template <class Body>
void for_each_row_chunk(int64_t T, const ProgressSpan& progress, Body&& body) {
    for (int64_t r0 = 0; r0 < T; r0 += ConformerLayer::kRowChunk) {
        const int64_t r1 = std::min(T, r0 + ConformerLayer::kRowChunk);
        body(r0, r1);
        progress.at(static_cast<double>(r1) / static_cast<double>(T));
    }
}

// Stage weights within a layer, by their share of the multiply-adds: FFNs 8·d·ff each,
// attention ~4·d² + the scores, conv ~3·d².
constexpr double kFf1End = 0.3, kAttentionEnd = 0.55, kConvEnd = 0.7;

}  // namespace

void ConformerLayer::feed_forward(ThreadTeam& team, Arena& arena, float* x, int64_t T,
                                  const LayerNormWeights& norm, const Linear& linear1,
                                  const Linear& linear2, const ProgressSpan& progress, const RowPaths& paths) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_, C = std::min(T, kRowChunk);
    float* h = arena.alloc_array<float>(static_cast<size_t>(C * d));
    float* u = arena.alloc_array<float>(static_cast<size_t>(C * ff_dim_));
    for_each_row_chunk(T, progress, [&](int64_t r0, int64_t r1) {
        const int64_t n = r1 - r0;
        float* xr = x + r0 * d;
        kernels::layer_norm(*kernels_, team, xr, n, d, norm.weight, norm.bias, kLayerNormEps, h);
        linear1.forward(team, arena, h, n, u, paths.from(r0));
        kernels::silu(*kernels_, team, u, n * ff_dim_, u);
        linear2.forward(team, arena, u, n, h, paths.from(r0));
        kernels::add_scaled(team, xr, h, 0.5f, n * d, xr);
    });
}

void ConformerLayer::full_attention(ThreadTeam& team, Arena& arena, float* x, int64_t T,
                                    const float* pos) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_, P = 2 * T - 1;
    float* h = arena.alloc_array<float>(static_cast<size_t>(T * d));
    float* q = arena.alloc_array<float>(static_cast<size_t>(T * d));
    float* k = arena.alloc_array<float>(static_cast<size_t>(T * d));
    float* v = arena.alloc_array<float>(static_cast<size_t>(T * d));
    float* p = arena.alloc_array<float>(static_cast<size_t>(P * d));
    kernels::layer_norm(*kernels_, team, x, T, d, norm_att_.weight, norm_att_.bias, kLayerNormEps, h);
    q_.forward(team, arena, h, T, q);
    k_.forward(team, arena, h, T, k);
    v_.forward(team, arena, h, T, v);
    pos_.forward(team, arena, pos, P, p);
    kernels::rel_pos_attention(*kernels_, team, arena, q, k, v, p, pos_bias_u_, pos_bias_v_, T, n_heads_,
                               d / n_heads_, h);
    out_.forward(team, arena, h, T, q);
    kernels::add(team, x, q, T * d, x);
}

void ConformerLayer::local_attention(ThreadTeam& team, Arena& arena, float* x, int64_t T, int left,
                                     int right, const float* pos, const ProgressSpan& progress) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_, C = std::min(T, kRowChunk), P = left + right + 1;
    float* k = arena.alloc_array<float>(static_cast<size_t>(T * d));
    float* v = arena.alloc_array<float>(static_cast<size_t>(T * d));
    float* p = arena.alloc_array<float>(static_cast<size_t>(P * d));
    float* h = arena.alloc_array<float>(static_cast<size_t>(C * d));
    float* q = arena.alloc_array<float>(static_cast<size_t>(C * d));
    float* a = arena.alloc_array<float>(static_cast<size_t>(C * d));
    pos_.forward(team, arena, pos, P, p);
    // Keys and values of the whole sequence first: a chunk's queries attend to frames of its
    // neighbours, and x is overwritten chunk by chunk below. The layer norm is recomputed per
    // chunk in the second pass (under 1 % of a layer) rather than kept: keeping it, or the
    // queries, would cost one more T x d buffer.
    for_each_row_chunk(T, progress.sub(0.0, 0.3), [&](int64_t r0, int64_t r1) {
        const int64_t n = r1 - r0;
        kernels::layer_norm(*kernels_, team, x + r0 * d, n, d, norm_att_.weight, norm_att_.bias, kLayerNormEps, h);
        k_.forward(team, arena, h, n, k + r0 * d);
        v_.forward(team, arena, h, n, v + r0 * d);
    });
    for_each_row_chunk(T, progress.sub(0.3, 1.0), [&](int64_t r0, int64_t r1) {
        const int64_t n = r1 - r0;
        float* xr = x + r0 * d;
        kernels::layer_norm(*kernels_, team, xr, n, d, norm_att_.weight, norm_att_.bias, kLayerNormEps, h);
        q_.forward(team, arena, h, n, q);
        kernels::local_rel_pos_attention(*kernels_, team, arena, q, k, v, p, pos_bias_u_, pos_bias_v_, T, r0, n,
                                         n_heads_, d / n_heads_, left, right, a);
        out_.forward(team, arena, a, n, q);
        kernels::add(team, xr, q, n * d, xr);
    });
}

void ConformerLayer::conv_in(ThreadTeam& team, Arena& arena, const float* x, int64_t n, float* g,
                             const RowPaths& paths) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_;
    float* h = arena.alloc_array<float>(static_cast<size_t>(n * d));
    float* wide = arena.alloc_array<float>(static_cast<size_t>(n * 2 * d));
    kernels::layer_norm(*kernels_, team, x, n, d, norm_conv_.weight, norm_conv_.bias, kLayerNormEps, h);
    pointwise1_.forward(team, arena, h, n, wide, paths);
    kernels::glu(*kernels_, team, wide, n, d, g);
}

void ConformerLayer::conv_out(ThreadTeam& team, Arena& arena, float* dw, int64_t n, float* x,
                              const RowPaths& paths) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_;
    float* h = arena.alloc_array<float>(static_cast<size_t>(n * d));
    if (conv_layer_norm_)
        kernels::layer_norm(*kernels_, team, dw, n, d, conv_norm_.weight, conv_norm_.bias, kLayerNormEps, dw);
    kernels::silu(*kernels_, team, dw, n * d, dw);
    pointwise2_.forward(team, arena, dw, n, h, paths);
    kernels::add(team, x, h, n * d, x);
}

void ConformerLayer::convolution(ThreadTeam& team, Arena& arena, float* x, int64_t T,
                                 const ProgressSpan& progress) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_;
    // A causal conv is the 'same' conv's middle rows on the input with kernel-1 zero rows put
    // in front: output t reads inputs t-(kernel-1) .. t.
    const int64_t lead = causal_conv_ ? kernel_ - 1 : 0, half = (kernel_ - 1) / 2;
    float* g_all = arena.alloc_array<float>(static_cast<size_t>((lead + T) * d));  // GLU output
    float* g = g_all + lead * d;
    float* dw_all = arena.alloc_array<float>(static_cast<size_t>((lead + T) * d));  // depthwise output
    float* dw = dw_all + (causal_conv_ ? half : 0) * d;
    std::fill(g_all, g, 0.0f);
    for_each_row_chunk(T, progress.sub(0.0, 0.5),
                       [&](int64_t r0, int64_t r1) { conv_in(team, arena, x + r0 * d, r1 - r0, g + r0 * d, {}); });
    // The depthwise convolution reads neighbouring frames, so it runs on the whole sequence.
    kernels::depthwise_conv1d(*kernels_, team, g_all, lead + T, d, depthwise_w_.data(), kernel_, depthwise_b_.data(),
                              dw_all);
    for_each_row_chunk(T, progress.sub(0.5, 1.0),
                       [&](int64_t r0, int64_t r1) { conv_out(team, arena, dw + r0 * d, r1 - r0, x + r0 * d, {}); });
}

void ConformerLayer::cached_convolution(ThreadTeam& team, Arena& arena, float* x,
                                        const std::vector<StepRows>& streams, int64_t total,
                                        const RowPaths& paths) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_, lead = kernel_ - 1, half = (kernel_ - 1) / 2;
    float* g = arena.alloc_array<float>(static_cast<size_t>(total * d));   // GLU output, stacked
    float* dw = arena.alloc_array<float>(static_cast<size_t>(total * d));  // depthwise output, stacked
    for_each_row_chunk(total, {}, [&](int64_t r0, int64_t r1) {
        conv_in(team, arena, x + r0 * d, r1 - r0, g + r0 * d, paths.from(r0));
    });
    int64_t row = 0;
    for (const StepRows& s : streams) {
        ArenaScope per_stream(arena);
        // [cache | the stream's GLU rows], conv'd as one sequence; output t of the stream is
        // the 'same' conv's row half + t (it reads inputs t .. t + kernel-1 of the sequence).
        float* seq = arena.alloc_array<float>(static_cast<size_t>((lead + s.rows) * d));
        float* out = arena.alloc_array<float>(static_cast<size_t>((lead + s.rows) * d));
        std::copy_n(s.cache->conv.data(), lead * d, seq);
        std::copy_n(g + row * d, s.rows * d, seq + lead * d);
        // NeMo's CausalConv1D keeps the last kernel-1 inputs of [cache | x] for the next step.
        std::copy_n(seq + s.rows * d, lead * d, s.cache->conv.data());
        kernels::depthwise_conv1d(*kernels_, team, seq, lead + s.rows, d, depthwise_w_.data(), kernel_,
                                  depthwise_b_.data(), out);
        std::copy_n(out + half * d, s.rows * d, dw + row * d);
        row += s.rows;
    }
    for_each_row_chunk(total, {}, [&](int64_t r0, int64_t r1) {
        conv_out(team, arena, dw + r0 * d, r1 - r0, x + r0 * d, paths.from(r0));
    });
}

void ConformerLayer::chunked_attention(ThreadTeam& team, Arena& arena, float* x, int64_t T, int left, int right,
                                       const float* pos) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_, P = left + 2 * right + 1;
    float* h = arena.alloc_array<float>(static_cast<size_t>(T * d));
    float* q = arena.alloc_array<float>(static_cast<size_t>(T * d));
    float* k = arena.alloc_array<float>(static_cast<size_t>(T * d));
    float* v = arena.alloc_array<float>(static_cast<size_t>(T * d));
    float* p = arena.alloc_array<float>(static_cast<size_t>(P * d));
    kernels::layer_norm(*kernels_, team, x, T, d, norm_att_.weight, norm_att_.bias, kLayerNormEps, h);
    q_.forward(team, arena, h, T, q);
    k_.forward(team, arena, h, T, k);
    v_.forward(team, arena, h, T, v);
    pos_.forward(team, arena, pos, P, p);
    attend(team, arena, q, k, v, p, T, AttentionSetting::chunked(left, right), h);
    out_.forward(team, arena, h, T, q);
    kernels::add(team, x, q, T * d, x);
}

std::vector<float> ConformerLayer::step_positions(ThreadTeam& team, Arena& arena, const float* pos, int64_t P) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_;
    float* p = arena.alloc_array<float>(static_cast<size_t>(P * d));
    pos_.forward(team, arena, pos, P, p);
    std::vector<float> pT(static_cast<size_t>(d * kernels::positions_stride(P)));
    kernels::transpose_positions(*kernels_, p, P, n_heads_, d / n_heads_, pT.data());
    return pT;
}

namespace {

// Makes room in `cache` for `rows` rows after its live ones (LayerStreamCache): the live rows
// go to row 0, and the buffers grow to hold them, the new rows and `slack` more.
void make_room(LayerStreamCache& cache, int64_t rows, int64_t slack, int64_t d) {
    const int64_t capacity = static_cast<int64_t>(cache.keys.size()) / d;
    if (cache.first + cache.frames + rows <= capacity) return;
    for (std::vector<float>* buffer : {&cache.keys, &cache.values}) {
        float* data = buffer->data();
        std::copy_n(data + cache.first * d, cache.frames * d, data);  // forward copy: the rows move down
        buffer->resize(static_cast<size_t>(std::max(capacity, cache.frames + rows + slack) * d));
    }
    cache.first = 0;
}

}  // namespace

void ConformerLayer::cached_attention(ThreadTeam& team, Arena& arena, float* x, const std::vector<StepRows>& streams,
                                      int64_t total, const RowPaths& paths) const {
    ArenaScope scope(arena);
    const int64_t d = d_model_;
    float* h = arena.alloc_array<float>(static_cast<size_t>(total * d));
    float* q = arena.alloc_array<float>(static_cast<size_t>(total * d));
    float* k_new = arena.alloc_array<float>(static_cast<size_t>(total * d));
    float* v_new = arena.alloc_array<float>(static_cast<size_t>(total * d));
    kernels::layer_norm(*kernels_, team, x, total, d, norm_att_.weight, norm_att_.bias, kLayerNormEps, h);
    q_.forward(team, arena, h, total, q, paths);
    k_.forward(team, arena, h, total, k_new, paths);
    v_.forward(team, arena, h, total, v_new, paths);
    int64_t row = 0;
    for (const StepRows& s : streams) {
        ArenaScope per_stream(arena);
        LayerStreamCache& cache = *s.cache;
        const int64_t T = s.rows, P = s.left + 2 * s.right + 1, n_c = cache.frames, n = n_c + T;
        // A quarter of L rows of slack: the live rows move every L / (4T) steps.
        make_room(cache, T, s.left / 4, d);
        float* k = cache.keys.data() + cache.first * d;  // [cache | step] keys
        float* v = cache.values.data() + cache.first * d;
        std::copy_n(k_new + row * d, T * d, k + n_c * d);
        std::copy_n(v_new + row * d, T * d, v + n_c * d);
        int64_t* begin = arena.alloc_array<int64_t>(static_cast<size_t>(T));
        int64_t* end = arena.alloc_array<int64_t>(static_cast<size_t>(T));
        std::fill(begin, begin + T, 0);
        std::fill(end, end + T, n);
        // Query r sits at key position n_c + r; relative positions reach L+R (a full cache, the
        // chunk's last frame) down to -(T-1) >= -R. The result goes to h, free after the projections.
        kernels::windowed_rel_pos_attention(*kernels_, team, arena, q + row * d, T, k, v, n, cache.positions->data(),
                                            P, s.left + s.right, pos_bias_u_, pos_bias_v_, n_heads_, d / n_heads_,
                                            n_c, begin, end, h + row * d);
        // The cache keeps the last L frames (NeMo: cache_last_channel, cache_drop_size 0).
        const int64_t keep = std::min<int64_t>(s.left, n);
        cache.first += n - keep;
        cache.frames = keep;
        row += T;
    }
    out_.forward(team, arena, h, total, q, paths);
    kernels::add(team, x, q, total * d, x);
}

void ConformerLayer::forward_steps(ThreadTeam& team, Arena& arena, float* x, const std::vector<StepRows>& streams,
                                   const RowPaths& paths) const {
    int64_t total = 0;
    for (const StepRows& s : streams) {
        total += s.rows;
        if (s.cache->conv.empty()) s.cache->conv.assign(static_cast<size_t>((kernel_ - 1) * d_model_), 0.0f);
    }
    if (total <= 0) return;
    feed_forward(team, arena, x, total, norm_ff1_, ff1_linear1_, ff1_linear2_, {}, paths);
    cached_attention(team, arena, x, streams, total, paths);
    cached_convolution(team, arena, x, streams, total, paths);
    feed_forward(team, arena, x, total, norm_ff2_, ff2_linear1_, ff2_linear2_, {}, paths);
    kernels::layer_norm(*kernels_, team, x, total, d_model_, norm_out_.weight, norm_out_.bias, kLayerNormEps, x);
}

void ConformerLayer::forward(ThreadTeam& team, Arena& arena, float* x, int64_t T,
                             const AttentionSetting& attention, const float* pos,
                             const ProgressSpan& progress) const {
    feed_forward(team, arena, x, T, norm_ff1_, ff1_linear1_, ff1_linear2_, progress.sub(0.0, kFf1End));
    if (attention.mode == AttentionSetting::Mode::Local) {
        local_attention(team, arena, x, T, attention.left, attention.right, pos,
                        progress.sub(kFf1End, kAttentionEnd));
    } else if (attention.mode == AttentionSetting::Mode::Chunked) {
        chunked_attention(team, arena, x, T, attention.left, attention.right, pos);
        progress.at(kAttentionEnd);
    } else {
        full_attention(team, arena, x, T, pos);
        progress.at(kAttentionEnd);
    }
    convolution(team, arena, x, T, progress.sub(kAttentionEnd, kConvEnd));
    feed_forward(team, arena, x, T, norm_ff2_, ff2_linear1_, ff2_linear2_, progress.sub(kConvEnd, 1.0));
    kernels::layer_norm(*kernels_, team, x, T, d_model_, norm_out_.weight, norm_out_.bias, kLayerNormEps, x);
}

}  // namespace pk
