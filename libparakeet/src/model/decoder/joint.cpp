#include "model/decoder/joint.h"

#include <cstring>

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

void Joint::project_encoders(ThreadTeam& team, Arena& arena, const std::vector<const float*>& enc,
                             const std::vector<int64_t>& n, const std::vector<float*>& proj) const {
    const bool invariant = kernels::path_invariant(enc_.weights().type());
    const int64_t D = enc_.in(), J = enc_.out();
    for (const kernels::MatmulPath path : {kernels::MatmulPath::Matvec, kernels::MatmulPath::Gemm}) {
        std::vector<size_t> group;
        int64_t rows = 0;
        for (size_t i = 0; i < enc.size(); ++i) {
            if (invariant ? path != kernels::MatmulPath::Matvec : kernels::auto_path(n[i]) != path) continue;
            group.push_back(i);
            rows += n[i];
        }
        if (rows == 0) continue;
        ArenaScope scope(arena);
        float* x = arena.alloc_array<float>(static_cast<size_t>(rows * D));
        float* y = arena.alloc_array<float>(static_cast<size_t>(rows * J));
        int64_t at = 0;
        for (const size_t i : group) {
            std::memcpy(x + at * D, enc[i], static_cast<size_t>(n[i] * D) * sizeof(float));
            at += n[i];
        }
        enc_.forward(team, arena, x, rows, y, -1, invariant ? kernels::MatmulPath::Auto : path);
        at = 0;
        for (const size_t i : group) {
            std::memcpy(proj[i], y + at * J, static_cast<size_t>(n[i] * J) * sizeof(float));
            at += n[i];
        }
    }
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
    out_.forward(team, arena, hidden, M, logits, -1, kernels::single_row_path(out_.weights().type()));
}

}  // namespace pk
