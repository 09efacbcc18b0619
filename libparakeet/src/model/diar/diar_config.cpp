#include "model/diar/diar_config.h"

#include <string>

#include "common/errors.h"
#include "gguf/gguf_reader.h"
#include "model/gguf_schema.h"

namespace pk {
namespace {

[[noreturn]] void reject(const GgufReader& g, const std::string& what) { throw ModelError(g.name() + ": " + what); }

// A tensor's PyTorch dimension `i` (outermost first) of a stored 2-D matrix.
int64_t torch_dim(const GgufTensor& t, int i) { return t.ne[static_cast<size_t>(t.n_dims - 1 - i)]; }

// The transformer's size off its tensors, for files that do not say (parakeet.cpp's).
void read_transformer_shape(const GgufReader& g, DiarConfig& c) {
    int layers = 0;
    while (g.find_tensor(schema::tf_layer_module(layers, schema::kTfNorm1) + ".weight") != nullptr) ++layers;
    if (!g.has_key(schema::kDiarTfNLayers)) c.tf_n_layers = layers;
    if (!g.has_key(schema::kDiarTfInnerSize)) {
        const GgufTensor* in = g.find_tensor(schema::tf_layer_module(0, schema::kTfDenseIn) + ".weight");
        if (in == nullptr || in->n_dims != 2)
            reject(g, "no " + schema::tf_layer_module(0, schema::kTfDenseIn) + ".weight to size the transformer by");
        c.tf_inner_size = static_cast<int>(torch_dim(*in, 0));
    }
}

}  // namespace

DiarConfig read_diar_config(const GgufReader& g) {
    if (!g.has_key(schema::kArch) || g.get_string(schema::kArch) != schema::kArchDiarization)
        reject(g, std::string(schema::kArch) + " is not '" + schema::kArchDiarization + "'");
    if (g.alignment() < kMinTensorAlignment)
        reject(g, "general.alignment = " + std::to_string(g.alignment()) + " is below " +
                      std::to_string(kMinTensorAlignment));
    DiarConfig c;
    c.pre = read_preprocessor_config(g);
    c.enc = read_encoder_config(g);
    if (c.enc.chunked_limited() || c.enc.causal_subsampling || c.enc.causal_conv)
        reject(g, "a cache-aware (causal) encoder in a diarization model is not supported");
    if (c.enc.feat_in != c.pre.n_mels)
        reject(g, schema::short_key(schema::kEncoderFeatIn) + " differs from " +
                      schema::short_key(schema::kPreprocessorNMels));
    c.n_speakers = get_int(g, schema::kDiarNSpeakers, 1, 64);
    c.tf_d_model = get_int(g, schema::kDiarTfDModel, 1, 8192);
    read_transformer_shape(g, c);
    c.tf_n_layers = get_int(g, schema::kDiarTfNLayers, 1, 256, &c.tf_n_layers);
    // parakeet.cpp's files do not give the transformer's heads; NeMo's released models have as
    // many as the encoder (8), which is what such a file is taken to mean.
    c.tf_n_heads = get_int(g, schema::kDiarTfNHeads, 1, 256, &c.enc.n_heads);
    c.tf_inner_size = get_int(g, schema::kDiarTfInnerSize, 1, 65536, &c.tf_inner_size);
    if (c.tf_d_model % c.tf_n_heads != 0)
        reject(g, schema::short_key(schema::kDiarTfDModel) + " must be a multiple of the transformer's heads (" +
                      std::to_string(c.tf_n_heads) + ")");
    c.upsample_factor = get_int(g, schema::kDiarUpsampleFactor, 1, 64, &c.upsample_factor);
    if (c.upsample_factor != c.enc.subsampling_factor)
        reject(g, schema::short_key(schema::kDiarUpsampleFactor) + " differs from the encoder's subsampling factor");
    c.frame_sec = static_cast<double>(c.pre.hop_length) * c.enc.subsampling_factor / c.pre.sample_rate;
    c.onset = get_float(g, schema::kDiarOnsetThreshold, c.onset);
    c.offset = get_float(g, schema::kDiarOffsetThreshold, c.offset);

    // Our converter writes every cache key (the checkpoint's values). A file without them is
    // parakeet.cpp's, whose loader documents its own defaults for absent keys: those apply.
    c.streaming_mode = get_flag(g, schema::kDiarStreamingMode, true);
    DiarStreamingParams& s = c.streaming;
    const int pcpp_chunk = 264, pcpp_fifo = 0, pcpp_sil_frames = 1;
    s.chunk_len = get_int(g, schema::kDiarChunkLen, 1, 1 << 16, &pcpp_chunk);
    s.spkcache_len = get_int(g, schema::kDiarSpkcacheLen, 1, 1 << 16, &pcpp_chunk);
    s.fifo_len = get_int(g, schema::kDiarFifoLen, 0, 1 << 16, &pcpp_fifo);
    s.spkcache_update_period = get_int(g, schema::kDiarSpkcacheUpdatePeriod, 1, 1 << 16, &pcpp_chunk);
    s.spkcache_sil_frames_per_spk = get_int(g, schema::kDiarSpkcacheSilFramesPerSpk, 0, 1 << 10, &pcpp_sil_frames);
    // parakeet.cpp names no contexts (its default mode has no right context); NeMo's config
    // default is 1 on each side
    s.chunk_left_context = get_int(g, schema::kDiarChunkLeftContext, 0, 1 << 16, &s.chunk_left_context);
    s.chunk_right_context = get_int(g, schema::kDiarChunkRightContext, 0, 1 << 16, &s.chunk_right_context);
    s.sil_threshold = get_float(g, schema::kDiarSilThreshold, static_cast<float>(s.sil_threshold));
    s.pred_score_threshold = get_float(g, schema::kDiarPredScoreThreshold, static_cast<float>(s.pred_score_threshold));
    s.scores_boost_latest = get_float(g, schema::kDiarScoresBoostLatest, static_cast<float>(s.scores_boost_latest));
    s.strong_boost_rate = get_float(g, schema::kDiarStrongBoostRate, static_cast<float>(s.strong_boost_rate));
    s.weak_boost_rate = get_float(g, schema::kDiarWeakBoostRate, static_cast<float>(s.weak_boost_rate));
    s.min_pos_scores_rate = get_float(g, schema::kDiarMinPosScoresRate, static_cast<float>(s.min_pos_scores_rate));
    return c;
}

}  // namespace pk
