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
// (local attention's keys and values; the conv module's GLU and depthwise outputs). Chunk
// boundaries are fixed, so results depend only on the input (which kernels compute a row can
// depend on its chunk's row count, kernels::MatmulPath, and that count is fixed too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/encoder/attention_setting.h"
#include "model/encoder/batch_rows.h"
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

// One stream's part of a batched streaming step (ConformerLayer::forward_steps).
struct StepRows {
    int64_t rows = 0;                  // its new frames, consecutive rows of the stacked x (> 0)
    int left = 0, right = 0;           // its attention context [L, R]
    LayerStreamCache* cache = nullptr; // its cache of this layer (positions set: step_positions)
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

    // One cache-aware streaming step of several streams at once (NeMo's ConformerLayer with
    // cache_last_channel and cache_last_time, for each stream): x holds the streams' new frames
    // stacked in order (streams[b].rows rows each), updated in place. Every product runs once
    // on the stacked rows: a product's row depends only on that row (layers/linear.h), so each
    // stream's rows get the bits they would get alone. The attention and the depthwise conv,
    // which read other frames, run stream by stream on that stream's cache: its keys and values
    // (the chunked_limited mask shows a chunk its whole left context) and its conv inputs.
    // Each cache is updated for the stream's next step. `paths`: the kernels of the stacked rows
    // (RowPaths: the streams with few rows first).
    void forward_steps(ThreadTeam& team, Arena& arena, float* x, const std::vector<StepRows>& streams,
                       const RowPaths& paths) const;
    // LayerStreamCache::positions for context [L, R]: pos holds the P = L+2R+1 rows of relative
    // positions L+R .. -R (RelPositionTable).
    std::vector<float> step_positions(ThreadTeam& team, Arena& arena, const float* pos, int64_t P) const;

    // Several independent utterances at once (an offline batch): x holds their frames stacked
    // as `batch` says, updated in place; each utterance's rows get the bits forward() gives it
    // alone with its attention and positions. Every product runs on the stacked rows, each row
    // by the kernels it takes alone (BatchRows' segments); the attention and the depthwise
    // conv, which read other frames, read each utterance's own rows only: full attention and a
    // non-causal depthwise conv in one kernel call for all utterances (one team dispatch rather
    // than one per utterance), local and chunked attention and a causal conv utterance by
    // utterance. `mark` is told of each stage as it ends.
    void forward_batch(ThreadTeam& team, Arena& arena, float* x, const BatchRows& batch,
                       const BatchStageMark& mark = {}) const;

    // Rows per chunk of the row-wise stages.
    static constexpr int64_t kRowChunk = 512;

    size_t packed_bytes() const;

private:
    void feed_forward(ThreadTeam& team, Arena& arena, float* x, int64_t T, const LayerNormWeights& norm,
                      const Linear& linear1, const Linear& linear2, const ProgressSpan& progress,
                      const RowPaths& paths = {}) const;
    void full_attention(ThreadTeam& team, Arena& arena, float* x, int64_t T, const float* pos) const;
    void local_attention(ThreadTeam& team, Arena& arena, float* x, int64_t T, int left, int right,
                         const float* pos, const ProgressSpan& progress) const;
    // Chunked-limited attention on the whole sequence (offline): pos as StepRows::pos.
    void chunked_attention(ThreadTeam& team, Arena& arena, float* x, int64_t T, int left, int right,
                           const float* pos) const;
    // The local or chunked attention of one sequence of T frames on its projected queries,
    // keys, values and positions p (as forward() takes pos, projected) into out [T, d]. (Full
    // attention runs kernels::rel_pos_attention_batch.)
    void attend(ThreadTeam& team, Arena& arena, const float* q, const float* k, const float* v, const float* p,
                int64_t T, const AttentionSetting& attention, float* out) const;
    // forward_batch's attention and convolution modules.
    void batch_attention(ThreadTeam& team, Arena& arena, float* x, const BatchRows& batch,
                         const BatchStageMark& mark) const;
    void batch_convolution(ThreadTeam& team, Arena& arena, float* x, const BatchRows& batch,
                           const BatchStageMark& mark) const;
    // The streaming step's attention of every stream over its cache + its rows (forward_steps).
    void cached_attention(ThreadTeam& team, Arena& arena, float* x, const std::vector<StepRows>& streams,
                          int64_t total, const RowPaths& paths) const;
    // The convolution module on the whole sequence (offline: zero padding).
    void convolution(ThreadTeam& team, Arena& arena, float* x, int64_t T, const ProgressSpan& progress) const;
    // The streaming step's convolution module: the depthwise conv of each stream reads its
    // last kernel-1 inputs from its cache in place of the zero padding, and updates them.
    void cached_convolution(ThreadTeam& team, Arena& arena, float* x, const std::vector<StepRows>& streams,
                            int64_t total, const RowPaths& paths) const;
    // The conv module's row-wise halves on n rows (independent rows, so any run of rows):
    // LN → pointwise1 → GLU into g [n, d]; and (LN) → Swish → pointwise2 on the depthwise
    // output dw [n, d] (overwritten), added to x.
    void conv_in(ThreadTeam& team, Arena& arena, const float* x, int64_t n, float* g, const RowPaths& paths) const;
    void conv_out(ThreadTeam& team, Arena& arena, float* dw, int64_t n, float* x, const RowPaths& paths) const;

    static constexpr float kLayerNormEps = 1e-5f;

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
