#include "model/encoder/encoder.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"
#include "kernels/ops_elementwise.h"
#include "model/gguf_schema.h"

namespace pk {

FastConformerEncoder::FastConformerEncoder(const TensorLoader& t, const EncoderConfig& cfg)
    : cfg_(cfg), subsampling_(t, cfg), positions_(cfg.d_model) {
    layers_.reserve(static_cast<size_t>(cfg.n_layers));
    for (int i = 0; i < cfg.n_layers; ++i) layers_.emplace_back(t, cfg, i);
    if (t.has(schema::weight(schema::layer_module(cfg.n_layers, schema::kNormOut))))
        t.fail(std::string("the file has more encoder layers than ") + schema::kEncoderNLayers + " says");
}

size_t FastConformerEncoder::packed_bytes() const {
    size_t n = 0;
    for (const auto& l : layers_) n += l.packed_bytes();
    return n;
}

void FastConformerEncoder::subsample(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames,
                                     float* out) const {
    if (output_frames(mel_frames) > 0) subsampling_.forward(team, arena, mel, mel_frames, out);
}

void FastConformerEncoder::run_layers(ThreadTeam& team, Arena& arena, float* x, int64_t T,
                                      const AttentionSetting& attention, const ProgressSpan& progress,
                                      const StageObserver& observe) const {
    if (T <= 0) return;
    const int64_t d = cfg_.d_model;
    // NeMo multiplies by the Python float sqrt(d_model), applied in float32.
    if (cfg_.xscaling) kernels::scale(team, x, static_cast<float>(std::sqrt(static_cast<double>(d))), T * d, x);
    const AttentionSetting att = attention.resolve(T);
    const PositionRows rows = PositionRows::of(att, T);
    const auto table = positions_.get(rows.reach());
    const float* pos = table->at(rows, d);
    const double n = static_cast<double>(layers_.size());
    for (size_t i = 0; i < layers_.size(); ++i) {
        layers_[i].forward(team, arena, x, T, att, pos, progress.sub(i / n, (i + 1) / n));
        if (observe) observe(static_cast<int>(i), x, T);
    }
}

void FastConformerEncoder::forward(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames,
                                   float* out, const AttentionSetting& attention, const ProgressSpan& progress,
                                   const StageObserver& observe) const {
    const int64_t T = output_frames(mel_frames);
    if (T <= 0) return;
    subsample(team, arena, mel, mel_frames, out);
    if (observe) observe(-1, out, T);
    run_layers(team, arena, out, T, attention, progress, observe);
}

}  // namespace pk

namespace pk {

EncoderStreamCache FastConformerEncoder::stream_cache(const AttContext& context) const {
    EncoderStreamCache c;
    c.context = context;
    c.layers.resize(layers_.size());
    return c;
}

int64_t FastConformerEncoder::stream_step(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames,
                                          int64_t drop, EncoderStreamCache& cache, float* out) const {
    std::vector<EncoderStep> one{{mel, mel_frames, drop, &cache}};
    stream_steps(team, arena, one, out);
    return one[0].frames;
}

const FastConformerEncoder::LayerPositions& FastConformerEncoder::step_positions(ThreadTeam& team, Arena& arena,
                                                                                const AttContext& context) const {
    std::lock_guard<std::mutex> lock(step_positions_mu_);
    LayerPositions& made = step_positions_[{context.left, context.right}];
    if (made.empty()) {
        const int L = context.left, R = context.right;
        const int64_t reach = L + R + 1;
        const auto table = positions_.get(reach);
        for (const ConformerLayer& layer : layers_)  // positions L+R .. -R
            made.push_back(std::make_shared<const std::vector<float>>(
                layer.step_positions(team, arena, table->for_length(reach, cfg_.d_model), L + 2 * R + 1)));
    }
    return made;  // a map's elements stay where they are
}

void FastConformerEncoder::stream_steps(ThreadTeam& team, Arena& arena, std::vector<EncoderStep>& steps,
                                        float* out) const {
    if (!cfg_.cache_aware()) throw InvalidArgument("the encoder is not a cache-aware streaming encoder");
    const int64_t d = cfg_.d_model;
    // The rows: first the streams whose step alone runs its products by the matrix-vector
    // kernel (few frames), then the others (RowPaths), each stream's frames together.
    std::vector<EncoderStep*> order;
    for (EncoderStep& s : steps) {
        const int64_t all = output_frames(s.mel_frames);
        s.frames = all - std::min(s.drop, all);
        if (s.frames > 0) order.push_back(&s);
    }
    std::stable_partition(order.begin(), order.end(), [](const EncoderStep* s) {
        return kernels::auto_path(s->frames) == kernels::MatmulPath::Matvec;
    });
    // Per stream: the subsampling's convolutions on the frames it keeps (they read
    // neighbouring frames) and, at its first step, its context's positions; then the
    // subsampling's projection of all streams' frames.
    std::vector<StepRows> rows;
    RowPaths paths{true, 0};
    int64_t total = 0;
    for (const EncoderStep* s : order) total += s->frames;
    ArenaScope scope(arena);
    float* flat = arena.alloc_array<float>(static_cast<size_t>(total * subsampling_.feature_size()));
    total = 0;
    for (EncoderStep* s : order) {
        const int64_t all = output_frames(s->mel_frames);
        subsampling_.features(team, arena, s->mel, s->mel_frames, all - s->frames, all,
                              flat + total * subsampling_.feature_size());
        EncoderStreamCache& cache = *s->cache;
        if (!cache.layers.empty() && !cache.layers[0].positions) {
            const LayerPositions& positions = step_positions(team, arena, cache.context);
            for (size_t i = 0; i < layers_.size(); ++i) cache.layers[i].positions = positions[i];
        }
        rows.push_back({s->frames, cache.context.left, cache.context.right, nullptr});
        s->row = total;
        total += s->frames;
        if (kernels::auto_path(s->frames) == kernels::MatmulPath::Matvec) paths.matvec_rows = total;
    }
    if (total == 0) return;
    subsampling_.project(team, arena, flat, total, out, paths);
    if (cfg_.xscaling) kernels::scale(team, out, static_cast<float>(std::sqrt(static_cast<double>(d))), total * d, out);
    for (size_t i = 0; i < layers_.size(); ++i) {
        for (size_t r = 0; r < order.size(); ++r) rows[r].cache = &order[r]->cache->layers[i];
        layers_[i].forward_steps(team, arena, out, rows, paths);
    }
}

}  // namespace pk
