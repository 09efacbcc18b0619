#include "model/decoder/joint.h"

#include "model/gguf_schema.h"

namespace pk {

Joint Joint::load(const TensorLoader& t, const ModelConfig& cfg) {
    Joint j;
    const int64_t outputs = cfg.vocab_size + 1 + static_cast<int64_t>(cfg.durations.size());
    j.enc_ = Linear::load(t, schema::kJointEnc, cfg.joint_hidden, cfg.enc.d_model, true);
    j.pred_ = Linear::load(t, schema::kJointPred, cfg.joint_hidden, cfg.pred_hidden, true);
    j.out_ = Linear::load(t, schema::kJointOut, outputs, cfg.joint_hidden, true);
    return j;
}

void Joint::logits(ThreadTeam& team, Arena& arena, const float* enc_proj_row, const float* pred_proj,
                   float* logits) const {
    ArenaScope scope(arena);
    const int64_t J = enc_.out();
    float* hidden = arena.alloc_array<float>(static_cast<size_t>(J));
    for (int64_t i = 0; i < J; ++i) {
        const float s = enc_proj_row[i] + pred_proj[i];
        hidden[i] = s > 0.0f ? s : 0.0f;
    }
    out_.forward(team, arena, hidden, 1, logits);
}

}  // namespace pk
