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

void PredictionNet::step(ThreadTeam& team, Arena& arena, int token, const float* h, const float* c, float* h_out,
                         float* c_out) const {
    ArenaScope scope(arena);
    const int64_t H = hidden_;
    float* gates = arena.alloc_array<float>(static_cast<size_t>(4 * H));
    float* recurrent = layers() > 1 ? arena.alloc_array<float>(static_cast<size_t>(4 * H)) : nullptr;
    for (int l = 0; l < layers(); ++l) {
        const Layer& layer = layers_[static_cast<size_t>(l)];
        const float* h_l = h + l * H;
        const float* c_l = c + l * H;
        if (l == 0) {
            const float* row = input_table_.data() + static_cast<int64_t>(token) * 4 * H;
            kernels::matmul(team, arena, h_l, 1, H, *layer.w_hh, row, gates);
        } else {
            kernels::matmul(team, arena, h_out + (l - 1) * H, 1, H, *layer.w_ih, layer.bias.data(), gates);
            kernels::matmul(team, arena, h_l, 1, H, *layer.w_hh, nullptr, recurrent);
            for (int64_t j = 0; j < 4 * H; ++j) gates[j] += recurrent[j];
        }
        float* ho = h_out + l * H;
        float* co = c_out + l * H;
        for (int64_t j = 0; j < H; ++j) {
            const float i_gate = sigmoid(gates[j]);
            const float f_gate = sigmoid(gates[H + j]);
            const float g_gate = std::tanh(gates[2 * H + j]);
            const float o_gate = sigmoid(gates[3 * H + j]);
            co[j] = f_gate * c_l[j] + i_gate * g_gate;
            ho[j] = o_gate * std::tanh(co[j]);
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
