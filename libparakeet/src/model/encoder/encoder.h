// FastConformerEncoder: subsampling, x-scaling, relative positions and the conformer layers —
// NeMo's ConformerEncoder (rel_pos attention, dw_striding ×8) in eval mode, batch of one.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/encoder/conformer_layer.h"
#include "model/encoder/rel_position_table.h"
#include "model/encoder/subsampling.h"

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
    // allocated by the caller (usually in the same arena, before calling).
    void forward(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames, float* out,
                 const StageObserver& observe = {}) const;

    int64_t d_model() const { return cfg_.d_model; }
    size_t packed_bytes() const;

private:
    EncoderConfig cfg_;
    DwStridingSubsampling subsampling_;
    std::vector<ConformerLayer> layers_;
    RelPositionTable positions_;
};

}  // namespace pk
