// FastConformerEncoder: subsampling, x-scaling, relative positions and the conformer layers —
// NeMo's ConformerEncoder (rel_pos attention, dw_striding ×8) in eval mode, batch of one.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/encoder/attention_setting.h"
#include "model/encoder/conformer_layer.h"
#include "model/encoder/rel_position_table.h"
#include "model/encoder/subsampling.h"
#include "model/request_progress.h"

namespace pk {

class FastConformerEncoder {
public:
    FastConformerEncoder(const TensorLoader& t, const EncoderConfig& cfg);

    static int64_t output_frames(int64_t mel_frames) { return DwStridingSubsampling::output_frames(mel_frames); }

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

    // The subsampling stage alone: out as for forward(). The mel may be given back afterwards.
    void subsample(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames, float* out) const;
    // x-scaling and the conformer layers on the subsampled x: [T, d_model], in place.
    void run_layers(ThreadTeam& team, Arena& arena, float* x, int64_t T, const AttentionSetting& attention,
                    const ProgressSpan& progress = {}, const StageObserver& observe = {}) const;

    int64_t d_model() const { return cfg_.d_model; }
    size_t packed_bytes() const;

private:
    EncoderConfig cfg_;
    DwStridingSubsampling subsampling_;
    std::vector<ConformerLayer> layers_;
    RelPositionTable positions_;
};

}  // namespace pk
