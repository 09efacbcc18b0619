#include "model/decoder/prediction_net.h"

#include <cmath>
#include <cstring>
#include <string>

#include "model/decoder/decoder_weights.h"
#include "model/gguf_schema.h"

namespace pk {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

std::vector<float> summed_bias(const TensorLoader& t, int layer, int64_t gates) {
    const float* b_ih = t.f32(schema::lstm_param("bias_ih", layer), {gates});
    const float* b_hh = t.f32(schema::lstm_param("bias_hh", layer), {gates});
    std::vector<float> b(static_cast<size_t>(gates));
    for (int64_t i = 0; i < gates; ++i) b[static_cast<size_t>(i)] = b_ih[i] + b_hh[i];
    return b;
}

}  // namespace

PredictionNet PredictionNet::load(const TensorLoader& t, const ModelConfig& cfg, ThreadTeam& team, Arena& arena) {
    PredictionNet net;
    const int64_t embed_dim = cfg.pred_hidden;
    const int64_t rows = cfg.vocab_size + 1;
    // NeMo's LSTM hidden size (rnn_hidden_size) defaults to pred_hidden, which every Parakeet
    // uses; the shape checks below reject a file where it differs.
    const int64_t hidden = cfg.pred_hidden;
    const int64_t gates = 4 * hidden;
    net.vocab_rows_ = static_cast<int>(rows);
    net.hidden_ = static_cast<int>(hidden);

    for (int l = 0; l < cfg.pred_rnn_layers; ++l) {
        Layer layer;
        layer.w_hh = load_packed_weights(t, schema::lstm_param("weight_hh", l), gates, hidden);
        if (l > 0) {
            layer.w_ih = load_packed_weights(t, schema::lstm_param("weight_ih", l), gates, hidden);
            layer.bias = summed_bias(t, l, gates);
        }
        net.layers_.push_back(std::move(layer));
    }

    // The first layer's input table: embed · W_ih0ᵀ + b for every token, the bias alone for
    // the blank (NeMo's start-of-sequence input is zeros, not the embedding row).
    const std::vector<float> embed = load_f32_copy(t, schema::weight(schema::kPredictionEmbed), rows, embed_dim);
    const auto w_ih0 = load_packed_weights(t, schema::lstm_param("weight_ih", 0), gates, embed_dim);
    const std::vector<float> b0 = summed_bias(t, 0, gates);
    net.input_table_.resize(static_cast<size_t>(rows * gates));
    {
        ArenaScope scope(arena);
        kernels::matmul(team, arena, embed.data(), rows - 1, embed_dim, *w_ih0, b0.data(), net.input_table_.data());
    }
    std::memcpy(net.input_table_.data() + (rows - 1) * gates, b0.data(), static_cast<size_t>(gates) * sizeof(float));
    return net;
}

void PredictionNet::step_rows(ThreadTeam& team, Arena& arena, int64_t M, const int* tokens, const float* const* h,
                              const float* const* c, float* const* h_out, float* const* c_out) const {
    ArenaScope scope(arena);
    const int64_t H = hidden_;
    const int64_t G = 4 * H;
    const auto floats = [&](int64_t n) { return arena.alloc_array<float>(static_cast<size_t>(n)); };
    float* x = floats(M * H);  // the rows' layer-l state, stacked
    float* gates = floats(M * G);
    float* input = floats(M * G);  // layer 0: the tokens' table rows; above: h of the layer below
    float* recurrent = layers() > 1 ? floats(M * G) : nullptr;
    const auto stack = [&](const float* const* rows, int64_t offset, float* dst) {
        for (int64_t m = 0; m < M; ++m) std::memcpy(dst + m * H, rows[m] + offset, static_cast<size_t>(H) * sizeof(float));
    };
    for (int l = 0; l < layers(); ++l) {
        const Layer& layer = layers_[static_cast<size_t>(l)];
        stack(h, l * H, x);
        if (l == 0) {
            for (int64_t m = 0; m < M; ++m)
                std::memcpy(input + m * G, input_table_.data() + static_cast<int64_t>(tokens[m]) * G,
                            static_cast<size_t>(G) * sizeof(float));
            kernels::matvec_row_bias(team, arena, x, M, H, *layer.w_hh, input, gates);
        } else {
            stack(h_out, (l - 1) * H, input);
            kernels::matmul(team, arena, input, M, H, *layer.w_ih, layer.bias.data(), gates, -1,
                            kernels::single_row_path(layer.w_ih->type()));
            kernels::matmul(team, arena, x, M, H, *layer.w_hh, nullptr, recurrent, -1,
                            kernels::single_row_path(layer.w_hh->type()));
            for (int64_t j = 0; j < M * G; ++j) gates[j] += recurrent[j];
        }
        for (int64_t m = 0; m < M; ++m) {
            const float* g = gates + m * G;
            const float* c_l = c[m] + l * H;
            float* ho = h_out[m] + l * H;
            float* co = c_out[m] + l * H;
            for (int64_t j = 0; j < H; ++j) {
                const float i_gate = sigmoid(g[j]);
                const float f_gate = sigmoid(g[H + j]);
                const float g_gate = std::tanh(g[2 * H + j]);
                const float o_gate = sigmoid(g[3 * H + j]);
                co[j] = f_gate * c_l[j] + i_gate * g_gate;
                ho[j] = o_gate * std::tanh(co[j]);
            }
        }
    }
}

size_t PredictionNet::packed_bytes() const {
    size_t bytes = input_table_.size() * sizeof(float);
    for (const Layer& l : layers_) {
        bytes += l.w_hh->packed_bytes() + l.bias.size() * sizeof(float);
        if (l.w_ih) bytes += l.w_ih->packed_bytes();
    }
    return bytes;
}

}  // namespace pk
