#include "model/sound/ced_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/errors.h"
#include "kernels/kernel_table.h"
#include "kernels/ops_activation.h"
#include "kernels/ops_layer_norm.h"
#include "model/model.h"
#include "model/model_kind.h"
#include "model/sound/ced_schema.h"
#include "model/tensor_loader.h"

namespace pk {

namespace {

namespace s = schema::ced;

int positive_key(const GgufReader& g, const char* key) {
    const int64_t v = g.get_i64(key);
    if (v <= 0 || v > (1 << 20)) throw g.error(std::string("key ") + key + " = " + std::to_string(v) + " is out of range");
    return static_cast<int>(v);
}

void expect(const GgufReader& g, bool ok, const std::string& what) {
    if (!ok) throw g.error(what + " (not a CED file this engine can run)");
}

}  // namespace

std::unique_ptr<CedModel> CedModel::load(GgufReader gguf, const LoadOptions& options) {
    refuse_other_model_kind(gguf, ModelKind::Sound);
    const IsaLevel level = checked_isa_level(options.isa);
    auto m = std::unique_ptr<CedModel>(new CedModel(std::move(gguf)));
    const GgufReader& g = m->gguf_;
    expect(g, detect_model_kind(g) == ModelKind::Sound, "general.architecture is not 'ced'");
    CedConfig& c = m->cfg_;
    c.embed_dim = positive_key(g, s::kEmbedDim);
    c.depth = positive_key(g, s::kDepth);
    c.num_heads = positive_key(g, s::kNumHeads);
    c.n_classes = positive_key(g, s::kOutputDim);
    c.patch = positive_key(g, s::kPatchSize);
    c.target_length = positive_key(g, s::kTargetLength);
    c.n_mels = positive_key(g, s::kNMels);
    c.sample_rate = positive_key(g, s::kSampleRate);
    c.ln_eps_encoder = g.get_f32(s::kLnEpsEncoder);
    c.ln_eps_head = g.get_f32(s::kLnEpsHead);
    m->bn_eps_ = g.get_f32(s::kBnEps);
    const float mlp_ratio = g.get_f32(s::kMlpRatio);
    c.mlp_hidden = static_cast<int>(std::lround(c.embed_dim * static_cast<double>(mlp_ratio)));
    expect(g, c.embed_dim % c.num_heads == 0, "ced.embed_dim is not a multiple of ced.num_heads");
    expect(g, positive_key(g, s::kPatchStride) == c.patch, "ced.patch_stride differs from ced.patch_size");
    expect(g, c.n_mels % c.patch == 0, "ced.n_mels is not a multiple of ced.patch_size");
    expect(g, c.target_length >= c.patch, "ced.target_length is shorter than a patch");
    expect(g, c.mlp_hidden > 0, "ced.mlp_ratio gives no MLP");
    expect(g, g.get_string(s::kPooling) == "mean", "ced.pooling is not 'mean'");
    expect(g, c.sample_rate == 16000, "ced.sample_rate is not 16000");
    m->labels_ = g.get_string_array(s::kLabels);
    expect(g, static_cast<int>(m->labels_.size()) == c.n_classes, "ced.labels does not have ced.outputdim entries");

    const TensorLoader t(g, level);
    m->level_ = level;
    m->kernels_ = &t.kernels();
    CedFrontendConfig fc;
    fc.n_fft = positive_key(g, s::kNFft);
    fc.hop = positive_key(g, s::kHopSize);
    fc.n_mels = c.n_mels;
    fc.amin = g.get_f32(s::kAmin);
    fc.top_db = g.get_f32(s::kTopDb);
    expect(g, positive_key(g, s::kWinSize) == fc.n_fft, "ced.win_size differs from ced.n_fft");
    expect(g, fc.n_fft >= 2 && (fc.n_fft & (fc.n_fft - 1)) == 0, "ced.n_fft is not a power of two");
    const int64_t bins = fc.n_fft / 2 + 1;
    const float* window = t.f32(s::kMelWindow, {fc.n_fft});
    const float* fb = t.f32(s::kMelFilterbank, {c.n_mels, bins});
    m->frontend_ = std::make_unique<CedFrontend>(fc, std::vector<float>(window, window + fc.n_fft),
                                                 std::vector<float>(fb, fb + c.n_mels * bins), *m->kernels_);

    const int64_t D = c.embed_dim;
    const std::string bn = s::kInitBn;
    m->bn_weight_ = t.f32(bn + ".weight", {c.n_mels});
    m->bn_bias_ = t.f32(bn + ".bias", {c.n_mels});
    m->bn_mean_ = t.f32(bn + ".running_mean", {c.n_mels});
    m->bn_var_ = t.f32(bn + ".running_var", {c.n_mels});
    const std::string proj = s::kPatchProj;
    // The patch convolution (stride = kernel) is one product of the patches with its weights
    // ([D, patch * patch], packed once here).
    m->patch_proj_ = std::make_unique<kernels::PackedWeights>(
        kernels::WeightType::F32, t.f32(proj + ".weight", {D, 1, c.patch, c.patch}), D,
        static_cast<int64_t>(c.patch) * c.patch, level);
    m->patch_bias_ = t.f32(proj + ".bias", {D});
    const int64_t max_tg = (c.target_length - c.patch) / c.patch + 1;  // a full chunk's time patches
    const GgufTensor& time_pos = t.get(s::kTimePos, {1, D, 1, g.tensor(s::kTimePos).ne[0]});
    expect(g, time_pos.ne[0] >= max_tg, "encoder.time_pos_embed is shorter than ced.target_length's patches");
    m->time_pos_stride_ = static_cast<int>(time_pos.ne[0]);
    m->time_pos_ = t.f32(s::kTimePos, {1, D, 1, time_pos.ne[0]});
    m->freq_pos_ = t.f32(s::kFreqPos, {1, D, c.n_mels / c.patch, 1});

    for (int i = 0; i < c.depth; ++i) {
        const std::string p = s::kBlocks + std::to_string(i) + ".";
        Block b;
        b.norm1 = {t.f32(p + "norm1.weight", {D}), t.f32(p + "norm1.bias", {D})};
        b.norm2 = {t.f32(p + "norm2.weight", {D}), t.f32(p + "norm2.bias", {D})};
        b.qkv = Linear::load(t, p + "attn.qkv", 3 * D, D, false);
        b.proj = Linear::load(t, p + "attn.proj", D, D, true);
        b.fc1 = Linear::load(t, p + "mlp.fc1", c.mlp_hidden, D, true);
        b.fc2 = Linear::load(t, p + "mlp.fc2", D, c.mlp_hidden, true);
        m->blocks_.push_back(std::move(b));
    }
    if (m->blocks_.front().qkv.weights().type() != kernels::WeightType::F32 &&
        kernels::int8_bf16_attention_available(*m->kernels_))
        m->attention_products_ = kernels::AttentionProducts::Int8Bf16;
    const std::string norm = s::kNorm, head_norm = s::kHeadNorm;
    m->norm_ = {t.f32(norm + ".weight", {D}), t.f32(norm + ".bias", {D})};
    m->head_norm_ = {t.f32(head_norm + ".weight", {D}), t.f32(head_norm + ".bias", {D})};
    m->head_ = Linear::load(t, s::kHeadLinear, c.n_classes, D, true);
    m->pool_ = std::make_unique<RequestPool>(options.threads);
    return m;
}

int64_t CedModel::min_samples() const {
    // frames(n) = 1 + n / hop >= patch, and more than n_fft/2 samples for the reflect padding.
    const CedFrontendConfig& f = frontend_->config();
    return std::max<int64_t>(static_cast<int64_t>(cfg_.patch - 1) * f.hop, f.n_fft / 2 + 1);
}

void CedModel::patch_embed(ThreadTeam& team, Arena& arena, const float* db, int64_t T, int64_t t0, int64_t tg,
                           float* x) const {
    const int P = cfg_.patch;
    const int64_t D = cfg_.embed_dim, fg = cfg_.n_mels / P, pp = static_cast<int64_t>(P) * P, n = fg * tg;
    ArenaScope scope(arena);
    float* patches = arena.alloc_array<float>(static_cast<size_t>(n * pp));
    parallel_for(team, n, 16, [&](int64_t begin, int64_t end) {
        for (int64_t tok = begin; tok < end; ++tok) {
            const int64_t f = tok / tg, tt = tok % tg;
            // The patch, BatchNorm'd per mel row as PyTorch's eval BatchNorm computes it.
            for (int i = 0; i < P; ++i) {
                const int64_t mel = f * P + i;
                const float inv_std = 1.f / std::sqrt(bn_var_[mel] + bn_eps_);
                const float* row = db + mel * T + t0 + tt * P;
                float* out = patches + tok * pp + static_cast<int64_t>(i) * P;
                for (int j = 0; j < P; ++j) out[j] = (row[j] - bn_mean_[mel]) * inv_std * bn_weight_[mel] + bn_bias_[mel];
            }
        }
    });
    kernels::matmul(team, arena, patches, n, pp, *patch_proj_, patch_bias_, x);
    parallel_for(team, n, 16, [&](int64_t begin, int64_t end) {
        for (int64_t tok = begin; tok < end; ++tok) {
            const int64_t f = tok / tg, tt = tok % tg;
            float* out = x + tok * D;
            for (int64_t d = 0; d < D; ++d) out[d] = (out[d] + time_pos_[d * time_pos_stride_ + tt]) + freq_pos_[d * fg + f];
        }
    });
}

void CedModel::attention(ThreadTeam& team, Arena& arena, const Block& b, const float* h, int64_t n, float* out) const {
    const int64_t D = cfg_.embed_dim, H = cfg_.num_heads, dh = D / H;
    ArenaScope scope(arena);
    float* qkv = arena.alloc_array<float>(static_cast<size_t>(n * 3 * D));
    b.qkv.forward(team, arena, h, n, qkv);
    kernels::dot_product_attention(*kernels_, team, arena, qkv, qkv + D, qkv + 2 * D, 3 * D, n, H, dh,
                                   1.f / std::sqrt(static_cast<float>(dh)), out, D, attention_products_);
}

void CedModel::add_then_norm(ThreadTeam& team, float* x, float* h, int64_t n, const Norm& norm) const {
    const int64_t D = cfg_.embed_dim;
    parallel_for(team, n, 8, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin * D; i < end * D; ++i) x[i] += h[i];
        kernels_->ops.layer_norm_rows(x + begin * D, end - begin, D, norm.weight, norm.bias, cfg_.ln_eps_encoder,
                                      h + begin * D);
    });
}

std::vector<float> CedModel::chunk_probabilities(ThreadTeam& team, Arena& arena, const float* db, int64_t T, int64_t t0,
                                                 int64_t len) const {
    const int64_t D = cfg_.embed_dim, tg = (len - cfg_.patch) / cfg_.patch + 1, n = (cfg_.n_mels / cfg_.patch) * tg;
    float* x = arena.alloc_array<float>(static_cast<size_t>(n * D));
    float* h = arena.alloc_array<float>(static_cast<size_t>(n * D));
    float* a = arena.alloc_array<float>(static_cast<size_t>(n * D));
    float* mlp = arena.alloc_array<float>(static_cast<size_t>(n * cfg_.mlp_hidden));
    patch_embed(team, arena, db, T, t0, tg, x);
    // x is the residual stream; h holds the normed input of the next sub-layer, then its output.
    kernels::layer_norm(*kernels_, team, x, n, D, blocks_[0].norm1.weight, blocks_[0].norm1.bias,
                        cfg_.ln_eps_encoder, h);
    for (size_t i = 0; i < blocks_.size(); ++i) {
        const Block& b = blocks_[i];
        attention(team, arena, b, h, n, a);
        b.proj.forward(team, arena, a, n, h);
        add_then_norm(team, x, h, n, b.norm2);
        b.fc1.forward(team, arena, h, n, mlp);
        kernels::gelu_erf(*kernels_, team, mlp, n * cfg_.mlp_hidden, mlp);
        b.fc2.forward(team, arena, mlp, n, h);
        add_then_norm(team, x, h, n, i + 1 < blocks_.size() ? blocks_[i + 1].norm1 : norm_);
    }
    // Mean pooling of the final norm's output, each channel summed over the tokens in order.
    std::vector<float> pooled(static_cast<size_t>(D));
    for (int64_t d = 0; d < D; ++d) {
        double acc = 0.0;
        for (int64_t i = 0; i < n; ++i) acc += h[i * D + d];
        pooled[d] = static_cast<float>(acc / static_cast<double>(n));
    }
    kernels::layer_norm(*kernels_, team, pooled.data(), 1, D, head_norm_.weight, head_norm_.bias, cfg_.ln_eps_head,
                        pooled.data());
    std::vector<float> probs(static_cast<size_t>(cfg_.n_classes));
    head_.forward(team, arena, pooled.data(), 1, probs.data());
    kernels::sigmoid(*kernels_, team, probs.data(), cfg_.n_classes, probs.data());
    return probs;
}

std::vector<float> CedModel::classify(ThreadTeam& team, Arena& arena, const float* samples, int64_t n) const {
    if (samples == nullptr && n > 0) throw InvalidArgument("invalid samples buffer");
    if (n < min_samples())
        throw InvalidArgument("audio too short for the sound tagger: " + std::to_string(n) + " samples, at least " +
                              std::to_string(min_samples()) + " needed");
    arena.reset();
    const std::vector<float> db = frontend_->compute(team, samples, n);
    const int64_t T = frontend_->frames(n);
    std::vector<double> sum(static_cast<size_t>(cfg_.n_classes), 0.0);
    int used = 0;
    for (int64_t t0 = 0; t0 < T; t0 += cfg_.target_length) {
        const int64_t len = std::min<int64_t>(cfg_.target_length, T - t0);
        if (len < cfg_.patch) continue;  // a tail shorter than a patch gives no token
        const std::vector<float> p = chunk_probabilities(team, arena, db.data(), T, t0, len);
        for (size_t c = 0; c < p.size(); ++c) sum[c] += p[c];
        ++used;
    }
    std::vector<float> probs(sum.size());
    for (size_t c = 0; c < sum.size(); ++c) probs[c] = static_cast<float>(sum[c] / used);
    return probs;
}

std::vector<float> CedModel::classify(const float* samples, int64_t n) const {
    const BackendLease lease = pool_->lease();
    Backend& b = lease.backend();
    std::vector<float> probs = classify(b.team(), b.arena(), samples, n);
    b.arena().release_if_above(kArenaKeepBytes);
    return probs;
}

}  // namespace pk
