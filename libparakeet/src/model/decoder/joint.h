// Joint: NeMo RNNTJoint in eval mode — logits(f, g) = W2 · relu(enc(f) + pred(g)) + b2, with
// V+1 token logits (blank last) followed by one logit per TDT duration. No log-softmax: the
// greedy searches only need argmaxes, and the confidence normalises what it uses.
//
// The encoder projection is applied to all frames of a request with one GEMM up front; the
// prediction projection once per emitted token. Read-only after load.
#pragma once

#include <cstdint>
#include <vector>

#include "model/layers/linear.h"
#include "model/model_config.h"

namespace pk {

class Joint {
public:
    // joint.enc [J, d_model], joint.pred [J, pred_hidden], joint.joint_net.2 [V+1+D, J].
    static Joint load(const TensorLoader& t, const ModelConfig& cfg);

    int hidden() const { return static_cast<int>(enc_.out()); }
    int outputs() const { return static_cast<int>(out_.out()); }

    // enc_proj[n_frames, J] = enc[n_frames, d_model] · Wencᵀ + b.
    void project_encoder(ThreadTeam& team, Arena& arena, const float* enc, int64_t n_frames, float* enc_proj) const {
        enc_.forward(team, arena, enc, n_frames, enc_proj);
    }
    // project_encoder for the frames of several chunks at once (the streams of a batched
    // decode): chunk i's n[i] frames at enc[i], projected to proj[i]. Each row keeps the bits
    // project_encoder gives it alone: the chunks whose rows a lone projection runs on one
    // kernel path share a product (all of them share one where the path changes no bits).
    void project_encoders(ThreadTeam& team, Arena& arena, const std::vector<const float*>& enc,
                          const std::vector<int64_t>& n, const std::vector<float*>& proj) const;
    // pred_proj[M, J] = g[M, pred_hidden] · Wpredᵀ + b. The rows of a batched decode keep the
    // bits of a lone row (kernels::single_row_path).
    void project_predictions(ThreadTeam& team, Arena& arena, const float* g, int64_t M, float* pred_proj) const {
        pred_.forward(team, arena, g, M, pred_proj, -1, kernels::single_row_path(pred_.weights().type()));
    }
    void project_prediction(ThreadTeam& team, Arena& arena, const float* g, float* pred_proj) const {
        project_predictions(team, arena, g, 1, pred_proj);
    }
    // logits[m, outputs()] from the enc_proj row enc_proj_rows[m] and the pred_proj row
    // pred_proj[m, J], for m < M (with the bits of each row alone, as above).
    void logits_rows(ThreadTeam& team, Arena& arena, int64_t M, const float* const* enc_proj_rows,
                     const float* pred_proj, float* logits) const;
    // One row of logits_rows.
    void logits(ThreadTeam& team, Arena& arena, const float* enc_proj_row, const float* pred_proj,
                float* logits) const {
        logits_rows(team, arena, 1, &enc_proj_row, pred_proj, logits);
    }

    size_t packed_bytes() const { return enc_.packed_bytes() + pred_.packed_bytes() + out_.packed_bytes(); }

private:
    Linear enc_;
    Linear pred_;
    Linear out_;
};

}  // namespace pk
