#include "model/encoder/encoder.h"

#include <cmath>

#include "kernels/ops_elementwise.h"

namespace pk {

FastConformerEncoder::FastConformerEncoder(const TensorLoader& t, const EncoderConfig& cfg)
    : cfg_(cfg), subsampling_(t, cfg), positions_(cfg.d_model) {
    layers_.reserve(static_cast<size_t>(cfg.n_layers));
    for (int i = 0; i < cfg.n_layers; ++i) layers_.emplace_back(t, cfg, i);
    if (t.has("encoder.layers." + std::to_string(cfg.n_layers) + ".norm_out.weight"))
        t.fail("the file has more encoder layers than parakeet.encoder.n_layers says");
}

size_t FastConformerEncoder::packed_bytes() const {
    size_t n = 0;
    for (const auto& l : layers_) n += l.packed_bytes();
    return n;
}

void FastConformerEncoder::forward(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames,
                                   float* out, const StageObserver& observe) const {
    const int64_t T = output_frames(mel_frames), d = cfg_.d_model;
    if (T <= 0) return;
    subsampling_.forward(team, arena, mel, mel_frames, out);
    if (observe) observe(-1, out, T);
    // NeMo multiplies by the Python float sqrt(d_model), applied in float32.
    if (cfg_.xscaling) kernels::scale(team, out, static_cast<float>(std::sqrt(static_cast<double>(d))), T * d, out);
    const auto table = positions_.get(T);
    const float* pos = table->for_length(T, d);
    for (size_t i = 0; i < layers_.size(); ++i) {
        layers_[i].forward(team, arena, out, T, pos);
        if (observe) observe(static_cast<int>(i), out, T);
    }
}

}  // namespace pk
