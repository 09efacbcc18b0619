// PredictionNet: the transducer's prediction network — NeMo RNNTDecoder in eval mode: an
// embedding of the last emitted token followed by a stack of LSTM layers (PyTorch gate order
// i, f, g, o; c' = f*c + i*g, h' = o*tanh(c')). Its output is the last layer's h.
//
// At load, the first layer's input product is folded into a table: row v = embed[v] · W_ih0ᵀ
// + b_ih0 + b_hh0 for every token, so a step costs one matrix-vector product per layer. The
// start-of-sequence input (the blank) is a zero vector in NeMo (RNNTDecoder.predict with
// y=None), so its row is the bias alone, whatever the embedding's blank row holds.
//
// Read-only after load: any number of requests may step it at once, each with its own state.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/matmul.h"
#include "model/model_config.h"
#include "model/tensor_loader.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk {

class PredictionNet {
public:
    // Reads decoder.prediction.* (embed [V+1, pred_hidden], dec_rnn.lstm.{weight_ih,weight_hh,
    // bias_ih,bias_hh}_l{l}); the table is computed with `team`, scratch from `arena`.
    static PredictionNet load(const TensorLoader& t, const ModelConfig& cfg, ThreadTeam& team, Arena& arena);

    int layers() const { return static_cast<int>(layers_.size()); }
    int hidden() const { return hidden_; }  // LSTM hidden size = output size
    // Floats of one state (h or c) over all layers.
    int64_t state_size() const { return static_cast<int64_t>(layers()) * hidden_; }

    // One step: input `token` (blank_id = the zero start-of-sequence input) from state (h, c),
    // each [layers, hidden], to (h_out, c_out); the output is the last row of h_out.
    // Outputs must not overlap inputs. Temporaries come from `arena` and are given back.
    void step(ThreadTeam& team, Arena& arena, int token, const float* h, const float* c, float* h_out,
              float* c_out) const {
        step_rows(team, arena, 1, &token, &h, &c, &h_out, &c_out);
    }
    // M steps at once (the streams of a batched decode), as one product per weight: row m steps
    // tokens[m] from (h[m], c[m]) to (h_out[m], c_out[m]), with the bits step() gives it alone
    // (every product runs its rows on a path that gives each the bits of a lone step's one row:
    // kernels::single_row_path; the first layer, with its per-token input row, by the
    // matrix-vector kernel, kernels::matvec_row_bias).
    void step_rows(ThreadTeam& team, Arena& arena, int64_t M, const int* tokens, const float* const* h,
                   const float* const* c, float* const* h_out, float* const* c_out) const;

    size_t packed_bytes() const;

private:
    struct Layer {
        std::shared_ptr<const kernels::PackedWeights> w_ih;  // layers >= 1 only
        std::shared_ptr<const kernels::PackedWeights> w_hh;
        std::vector<float> bias;                             // b_ih + b_hh (layers >= 1)
    };
    int vocab_rows_ = 0;  // V + 1
    int hidden_ = 0;
    std::vector<Layer> layers_;
    std::vector<float> input_table_;  // [V+1, 4 hidden]
};

}  // namespace pk
