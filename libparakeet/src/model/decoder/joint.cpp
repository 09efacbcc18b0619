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

void Joint::logits_rows(ThreadTeam& team, Arena& arena, int64_t M, const float* const* enc_proj_rows,
                        const float* pred_proj, float* logits) const {
    ArenaScope scope(arena);
    const int64_t J = enc_.out();
    float* hidden = arena.alloc_array<float>(static_cast<size_t>(M * J));
    for (int64_t m = 0; m < M; ++m) {
        const float* e = enc_proj_rows[m];
        const float* p = pred_proj + m * J;
        float* hm = hidden + m * J;
        for (int64_t i = 0; i < J; ++i) {
            const float s = e[i] + p[i];
            hm[i] = s > 0.0f ? s : 0.0f;
        }
    }
    out_.forward(team, arena, hidden, M, logits, -1, kernels::MatmulPath::Matvec);
}

}  // namespace pk
