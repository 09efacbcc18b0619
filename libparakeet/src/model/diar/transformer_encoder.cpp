#include "model/diar/transformer_encoder.h"

#include <algorithm>

#include "kernels/attention_rel_pos.h"
#include "kernels/ops_activation.h"
#include "kernels/ops_elementwise.h"
#include "kernels/ops_layer_norm.h"
#include "model/gguf_schema.h"

namespace pk {
namespace {

constexpr float kLayerNormEps = 1e-5f;  // nn.LayerNorm(hidden_size, eps=1e-5)

}  // namespace

TransformerLayer::TransformerLayer(const TensorLoader& t, const DiarConfig& cfg, int index)
    : d_(cfg.tf_d_model), heads_(cfg.tf_n_heads), inner_(cfg.tf_inner_size), kernels_(&t.kernels()) {
    const auto p = [index](const char* module) { return schema::tf_layer_module(index, module); };
    if (t.has(schema::weight(p(schema::kAttnWQkv)))) {  // parakeet.cpp's fused form
        q_ = Linear::load_rows(t, p(schema::kAttnWQkv), 0, d_, 3 * d_, d_);
        k_ = Linear::load_rows(t, p(schema::kAttnWQkv), d_, d_, 3 * d_, d_);
        v_ = Linear::load_rows(t, p(schema::kAttnWQkv), 2 * d_, d_, 3 * d_, d_);
    } else {
        q_ = Linear::load(t, p(schema::kTfQuery), d_, d_, true);
        k_ = Linear::load(t, p(schema::kTfKey), d_, d_, true);
        v_ = Linear::load(t, p(schema::kTfValue), d_, d_, true);
    }
    out_ = Linear::load(t, p(schema::kAttnOutProj), d_, d_, true);
    norm1_ = LayerNormWeights::load(t, p(schema::kTfNorm1), d_);
    dense_in_ = Linear::load(t, p(schema::kTfDenseIn), inner_, d_, true);
    dense_out_ = Linear::load(t, p(schema::kTfDenseOut), d_, inner_, true);
    norm2_ = LayerNormWeights::load(t, p(schema::kTfNorm2), d_);
}

void TransformerLayer::forward(ThreadTeam& team, Arena& arena, float* x, int64_t T) const {
    ArenaScope scope(arena);
    const int64_t n = T * d_, dk = d_ / heads_;
    float* q = arena.alloc_array<float>(static_cast<size_t>(n));
    float* k = arena.alloc_array<float>(static_cast<size_t>(n));
    float* v = arena.alloc_array<float>(static_cast<size_t>(n));
    float* att = arena.alloc_array<float>(static_cast<size_t>(n));
    q_.forward(team, arena, x, T, q);
    k_.forward(team, arena, x, T, k);
    v_.forward(team, arena, x, T, v);
    {
        // Plain attention through the relative-position kernel with zero positions and zero
        // biases: its scores are then q.k / sqrt(dk), NeMo's (q / dk^1/4).(k / dk^1/4).
        ArenaScope zeros(arena);
        float* pos = arena.alloc_array<float>(static_cast<size_t>((2 * T - 1) * d_));
        float* bias = arena.alloc_array<float>(static_cast<size_t>(d_));
        std::fill(pos, pos + (2 * T - 1) * d_, 0.0f);
        std::fill(bias, bias + d_, 0.0f);
        kernels::rel_pos_attention(*kernels_, team, arena, q, k, v, pos, bias, bias, T, heads_, dk, att);
    }
    out_.forward(team, arena, att, T, q);
    kernels::add(team, q, x, n, x);
    kernels::layer_norm(*kernels_, team, x, T, d_, norm1_.weight, norm1_.bias, kLayerNormEps, x);
    float* h = arena.alloc_array<float>(static_cast<size_t>(T * inner_));
    dense_in_.forward(team, arena, x, T, h);
    kernels::relu(team, h, T * inner_, h);
    dense_out_.forward(team, arena, h, T, q);
    kernels::add(team, q, x, n, x);
    kernels::layer_norm(*kernels_, team, x, T, d_, norm2_.weight, norm2_.bias, kLayerNormEps, x);
}

size_t TransformerLayer::packed_bytes() const {
    return q_.packed_bytes() + k_.packed_bytes() + v_.packed_bytes() + out_.packed_bytes() +
           dense_in_.packed_bytes() + dense_out_.packed_bytes();
}

TransformerEncoder::TransformerEncoder(const TensorLoader& t, const DiarConfig& cfg) {
    layers_.reserve(static_cast<size_t>(cfg.tf_n_layers));
    for (int i = 0; i < cfg.tf_n_layers; ++i) layers_.emplace_back(t, cfg, i);
}

void TransformerEncoder::forward(ThreadTeam& team, Arena& arena, float* x, int64_t T) const {
    for (const TransformerLayer& l : layers_) l.forward(team, arena, x, T);
}

size_t TransformerEncoder::packed_bytes() const {
    size_t n = 0;
    for (const TransformerLayer& l : layers_) n += l.packed_bytes();
    return n;
}

}  // namespace pk
