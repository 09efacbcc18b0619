// FastConformerEncoder::forward_batch: several independent utterances through the encoder at
// once (encoder.h).
#include <algorithm>
#include <cmath>

#include "kernels/ops_elementwise.h"
#include "model/encoder/batch_rows.h"
#include "model/encoder/encoder.h"

namespace pk {

void FastConformerEncoder::forward_batch(ThreadTeam& team, Arena& arena, std::vector<EncoderUtterance>& utterances,
                                         float* out, const BatchStageMark& mark) const {
    const int64_t d = cfg_.d_model, features = subsampling_.feature_size();
    // The rows: first the utterances whose products alone run by the matrix-vector kernel
    // (few frames), then the others, each utterance's frames together.
    std::vector<EncoderUtterance*> order;
    for (EncoderUtterance& u : utterances) {
        u.frames = std::max<int64_t>(0, output_frames(u.mel_frames));
        if (u.frames > 0) order.push_back(&u);
    }
    std::stable_partition(order.begin(), order.end(), [](const EncoderUtterance* u) {
        return kernels::auto_path(u->frames) == kernels::MatmulPath::Matvec;
    });
    // One snapshot of the position table that reaches every utterance's positions.
    std::vector<AttentionSetting> resolved;
    std::vector<PositionRows> positions;
    int64_t reach = 1;
    for (const EncoderUtterance* u : order) {
        resolved.push_back(u->attention.resolve(u->frames));
        positions.push_back(PositionRows::of(resolved.back(), u->frames));
        reach = std::max(reach, positions.back().reach());
    }
    const auto table = positions_.get(reach);
    BatchRows batch;
    RowSegments projection;  // the subsampling's projection: alone, in chunks of kChunkFrames frames
    for (size_t i = 0; i < order.size(); ++i) {
        order[i]->row = batch.total;
        batch.add(order[i]->frames, resolved[i], table->at(positions[i], d), positions[i].rows);
        projection.add_chunked(order[i]->frames, DwStridingSubsampling::kChunkFrames);
    }
    if (batch.total == 0) return;
    batch.share_positions(d);

    {
        // The subsampling's convolutions per utterance, in forward()'s chunks (they read
        // neighbouring frames; the chunks bound the arena), then its projection of all frames.
        ArenaScope subsampling(arena);
        float* flat = arena.alloc_array<float>(static_cast<size_t>(batch.total * features));
        for (const EncoderUtterance* u : order) {
            for (int64_t begin = 0; begin < u->frames; begin += DwStridingSubsampling::kChunkFrames) {
                const int64_t end = std::min(u->frames, begin + DwStridingSubsampling::kChunkFrames);
                subsampling_.features(team, arena, u->mel, u->mel_frames, begin, end,
                                      flat + (u->row + begin) * features);
            }
        }
        end_stage(mark, "subsampling convs per utterance");
        for (const RowSegment& s : projection.segments())
            subsampling_.project(team, arena, flat + s.begin * features, s.rows, out + s.begin * d, s.paths);
        end_stage(mark, "subsampling projection");
    }
    // NeMo multiplies by the Python float sqrt(d_model), applied in float32.
    if (cfg_.xscaling)
        kernels::scale(team, out, static_cast<float>(std::sqrt(static_cast<double>(d))), batch.total * d, out);
    end_stage(mark, "residual adds, x-scaling");
    for (const ConformerLayer& layer : layers_) layer.forward_batch(team, arena, out, batch, mark);
}

}  // namespace pk
