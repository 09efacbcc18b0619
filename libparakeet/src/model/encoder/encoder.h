// FastConformerEncoder: subsampling, x-scaling, relative positions and the conformer layers —
// NeMo's ConformerEncoder (rel_pos attention, dw_striding ×8) in eval mode, batch of one.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "model/encoder/attention_setting.h"
#include "model/encoder/conformer_layer.h"
#include "model/encoder/rel_position_table.h"
#include "model/encoder/stream_cache.h"
#include "model/encoder/subsampling.h"
#include "model/request_progress.h"

namespace pk {

// One utterance of a batched offline pass (FastConformerEncoder::forward_batch).
struct EncoderUtterance {
    const float* mel = nullptr;  // [mel_frames, n_mels], valid frames only
    int64_t mel_frames = 0;
    AttentionSetting attention;  // may be Auto (resolved by its length, as forward() does)
    int64_t frames = 0;          // set by the pass: output_frames(mel_frames),
    int64_t row = 0;             //   its rows of the output from this one on
};

class FastConformerEncoder {
public:
    FastConformerEncoder(const TensorLoader& t, const EncoderConfig& cfg);

    // Encoder frames for `mel_frames` valid mel frames (causal subsampling gives one more).
    int64_t output_frames(int64_t mel_frames) const { return subsampling_.output_frames(mel_frames); }
    const EncoderConfig& config() const { return cfg_; }

    // Called after the subsampling (stage -1, before x-scaling) and after each layer
    // (stage = layer index) with the [T, d_model] activations; for per-stage comparisons
    // against NeMo in tests. May be empty.
    using StageObserver = std::function<void(int stage, const float* x, int64_t T)>;

    // mel: [mel_frames, n_mels], valid frames only; out: [output_frames(mel_frames), d_model],
    // allocated by the caller (usually in the same arena, before calling). `attention` may be
    // Auto (resolved here by the output length). Equal to subsample() then run_layers().
    void forward(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames, float* out,
                 const AttentionSetting& attention, const ProgressSpan& progress = {},
                 const StageObserver& observe = {}) const;

    // forward() of several independent utterances at once: the products of the subsampling's
    // projection and of every layer run once on all utterances' frames stacked, each frame by
    // the kernels its utterance's pass alone gives it (model/encoder/batch_rows.h); the
    // subsampling's convolutions run utterance by utterance, and the attention (each utterance
    // its own relative positions and length, nothing padded) and the depthwise conv on each
    // utterance's own rows, in one call for all of them where their kernels allow. Each
    // utterance gets the bits forward() gives it alone. Sets every utterance's `frames` and
    // `row`; out holds the sum of their output_frames(mel_frames) rows. The utterances with at
    // most kernels::kMatvecMaxRows frames come first (RowPaths). No progress is reported;
    // `mark` is told of each stage as it ends.
    void forward_batch(ThreadTeam& team, Arena& arena, std::vector<EncoderUtterance>& utterances, float* out,
                       const BatchStageMark& mark = {}) const;

    // The subsampling stage alone: out as for forward(). The mel may be given back afterwards.
    void subsample(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames, float* out) const;
    // x-scaling and the conformer layers on the subsampled x: [T, d_model], in place.
    void run_layers(ThreadTeam& team, Arena& arena, float* x, int64_t T, const AttentionSetting& attention,
                    const ProgressSpan& progress = {}, const StageObserver& observe = {}) const;

    // One cache-aware streaming step, NeMo's ConformerEncoder.cache_aware_stream_step: the
    // causal subsampling on `mel_frames` mel frames (the pre-encode cache in front of the
    // chunk), the first `drop` of its output frames dropped (drop_extra_pre_encoded), and the
    // layers on the rest with `cache` (its context, its layers' caches; updated). out holds
    // output_frames(mel_frames) rows; the step's frames are written from row 0. Returns their
    // number. Throws InvalidArgument for a model that is not cache-aware.
    int64_t stream_step(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames, int64_t drop,
                        EncoderStreamCache& cache, float* out) const;
    // The same step for several streams at once, each with its own chunk, context and cache:
    // the layers' products run on all the streams' frames stacked (ConformerLayer::
    // forward_steps), and each stream gets the bits stream_step gives it alone. Sets every
    // step's `frames` and `row`; out holds the sum of output_frames(mel_frames) rows. The
    // streams with at most kernels::kMatvecMaxRows frames come first (RowPaths).
    void stream_steps(ThreadTeam& team, Arena& arena, std::vector<EncoderStep>& steps, float* out) const;
    // A fresh streaming state for `context` (NeMo's get_initial_cache_state: empty, zeros).
    EncoderStreamCache stream_cache(const AttContext& context) const;

    int64_t d_model() const { return cfg_.d_model; }
    size_t packed_bytes() const;

private:
    using LayerPositions = std::vector<std::shared_ptr<const std::vector<float>>>;  // per layer
    // Every layer's LayerStreamCache::positions for `context`: made on first use (thread-safe)
    // and shared by all the streams of that context, so that a batch reads one copy.
    const LayerPositions& step_positions(ThreadTeam& team, Arena& arena, const AttContext& context) const;

    EncoderConfig cfg_;
    DwStridingSubsampling subsampling_;
    std::vector<ConformerLayer> layers_;
    RelPositionTable positions_;
    mutable std::mutex step_positions_mu_;
    mutable std::map<std::pair<int, int>, LayerPositions> step_positions_;  // by context [L, R]
};

}  // namespace pk
