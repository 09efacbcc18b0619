// ConformerLayer: one FastConformer block as NeMo's ConformerLayer runs it in eval mode:
//
//   x += ½ · FFN1(LN(x))                        macaron half-step feed-forward
//   x += MHSA_relpos(LN(x), pos)                relative-position self-attention, full or local
//   x += Conv(LN(x))                            pointwise → GLU → depthwise (BN folded) → Swish → pointwise
//                                               (causal models: the depthwise conv pads kernel-1
//                                               before and none after, NeMo's CausalConv1D)
//   x += ½ · FFN2(LN(x))
//   x  = LN_out(x)
//
// FFN = linear1 → Swish → linear2. The weights are shared read-only by all requests; a
// request's temporaries live in its arena and are given back when the layer returns.
//
// Memory stays linear in T with a small constant: every stage whose rows are independent
// (layer norms, feed-forwards, projections, GLU, Swish) runs in chunks of kRowChunk rows, so
// no T x ff_dim buffer exists; the largest temporaries are two or three T x d_model buffers
// (local attention's keys and values; the conv module's GLU and depthwise outputs). A row's
// result never depends on the chunking (every kernel computes a row the same way for any
// number of rows), and chunk boundaries are fixed, so results depend only on the input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/encoder/attention_setting.h"
#include "model/encoder/stream_cache.h"
#include "model/layers/linear.h"
#include "model/model_config.h"
#include "model/request_progress.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk {

struct LayerNormWeights {
    const float* weight = nullptr;
    const float* bias = nullptr;
    static LayerNormWeights load(const TensorLoader& t, const std::string& prefix, int64_t dim);
};

class ConformerLayer {
public:
    ConformerLayer(const TensorLoader& t, const EncoderConfig& cfg, int index);

    // x: [T, d_model], updated in place. `attention` is Full or Local (resolved). pos: the
    // relative-position embeddings: full, the 2T-1 rows for positions T-1 .. -(T-1); local
    // [L, R], the L+R+1 rows for positions L .. -R (RelPositionTable rows either way).
    // `progress` is told how far the layer is, chunk by chunk (it may throw Cancelled).
    void forward(ThreadTeam& team, Arena& arena, float* x, int64_t T, const AttentionSetting& attention,
                 const float* pos, const ProgressSpan& progress = {}) const;

    // One cache-aware streaming step (NeMo's ConformerLayer with cache_last_channel and
    // cache_last_time): x [T, d_model] are the step's new frames, updated in place; the
    // attention sees the cached frames' keys and values and the step's own, all of them (the
    // chunked_limited mask shows a chunk its whole left context); pos: the rows of relative
    // positions L+R .. -R (RelPositionTable rows) of `cache`'s context. `cache` is updated for
    // the next step.
    void forward_step(ThreadTeam& team, Arena& arena, float* x, int64_t T, int left, int right, const float* pos,
                      LayerStreamCache& cache) const;

    // Rows per chunk of the row-wise stages.
    static constexpr int64_t kRowChunk = 512;

    size_t packed_bytes() const;

private:
    void feed_forward(ThreadTeam& team, Arena& arena, float* x, int64_t T, const LayerNormWeights& norm,
                      const Linear& linear1, const Linear& linear2, const ProgressSpan& progress) const;
    void full_attention(ThreadTeam& team, Arena& arena, float* x, int64_t T, const float* pos) const;
    void local_attention(ThreadTeam& team, Arena& arena, float* x, int64_t T, int left, int right,
                         const float* pos, const ProgressSpan& progress) const;
    // Chunked-limited attention on the whole sequence (offline): pos as for forward_step.
    void chunked_attention(ThreadTeam& team, Arena& arena, float* x, int64_t T, int left, int right,
                           const float* pos) const;
    // The streaming step's attention over cache + x (see forward_step).
    void cached_attention(ThreadTeam& team, Arena& arena, float* x, int64_t T, int left, int right,
                          const float* pos, LayerStreamCache& cache) const;
    // time_cache: a causal model's last kernel-1 depthwise inputs, read in place of the zero
    // padding and updated (streaming); null offline.
    void convolution(ThreadTeam& team, Arena& arena, float* x, int64_t T, const ProgressSpan& progress,
                     float* time_cache = nullptr) const;

    int64_t d_model_, n_heads_, ff_dim_, kernel_;
    bool conv_layer_norm_;
    bool causal_conv_;
    const kernels::KernelTable* kernels_;  // of the level the weights were packed for (TensorLoader)

    LayerNormWeights norm_ff1_, norm_att_, norm_conv_, norm_ff2_, norm_out_;
    Linear ff1_linear1_, ff1_linear2_, ff2_linear1_, ff2_linear2_;
    Linear q_, k_, v_, out_, pos_;
    const float* pos_bias_u_ = nullptr;
    const float* pos_bias_v_ = nullptr;
    Linear pointwise1_, pointwise2_;
    std::vector<float> depthwise_w_;  // packed [kernel, d], BatchNorm folded in
    std::vector<float> depthwise_b_;  // [d]
    LayerNormWeights conv_norm_;      // conv_norm_type layer_norm only
};

}  // namespace pk
