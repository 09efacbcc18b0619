#include "model/model_config.h"

#include <algorithm>

#include "common/errors.h"
#include "gguf/gguf_reader.h"
#include "model/gguf_schema.h"

namespace pk {
namespace {

[[noreturn]] void reject(const GgufReader& g, const std::string& what) {
    throw ModelError(g.name() + ": " + what);
}

Arch parse_arch(const GgufReader& g, const std::string& s) {
    if (s == "ctc") return Arch::Ctc;
    if (s == "rnnt") return Arch::Rnnt;
    if (s == "tdt") return Arch::Tdt;
    if (s == "hybrid_rnnt_ctc") return Arch::HybridRnntCtc;
    if (s == "hybrid_tdt_ctc") return Arch::HybridTdtCtc;
    reject(g, std::string(schema::kArch) + " '" + s +
                  "' is not supported (expected ctc, rnnt, tdt, hybrid_rnnt_ctc or hybrid_tdt_ctc)");
}

}  // namespace

int get_int(const GgufReader& g, const std::string& full, int lo, int hi, const int* fallback) {
    if (!g.has_key(full)) {
        if (fallback) return *fallback;
        reject(g, "missing key " + full);
    }
    const int64_t v = g.get_i64(full);
    if (v < lo || v > hi)
        reject(g, full + " = " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "]");
    return static_cast<int>(v);
}

float get_float(const GgufReader& g, const std::string& full, float fallback) {
    return g.has_key(full) ? g.get_f32(full) : fallback;
}

bool get_flag(const GgufReader& g, const std::string& full, bool fallback) {
    if (!g.has_key(full)) return fallback;
    const GgufKeyInfo* k = g.find_key(full);
    if (k->type == GgufValueType::Bool) return g.get_bool(full);
    return g.get_i64(full) != 0;
}

PreprocessorConfig read_preprocessor_config(const GgufReader& g) {
    PreprocessorConfig p;
    p.sample_rate = get_int(g, schema::kPreprocessorSampleRate, 8000, 48000, &p.sample_rate);
    p.n_mels = get_int(g, schema::kPreprocessorNMels, 1, 512, &p.n_mels);
    p.n_fft = get_int(g, schema::kPreprocessorNFft, 64, 4096, &p.n_fft);
    p.win_length = get_int(g, schema::kPreprocessorWinLength, 1, p.n_fft, &p.win_length);
    p.hop_length = get_int(g, schema::kPreprocessorHopLength, 1, p.n_fft, &p.hop_length);
    p.preemph = get_float(g, schema::kPreprocessorPreemph, p.preemph);
    p.mag_power = get_float(g, schema::kPreprocessorMagPower, p.mag_power);
    p.log_zero_guard = get_float(g, schema::kPreprocessorLogZeroGuard, p.log_zero_guard);
    const std::string norm_key = schema::kPreprocessorNormalize;
    if (g.has_key(norm_key)) {
        const std::string norm = g.get_string(norm_key);
        if (norm == "NA") p.normalize_per_feature = false;  // no normalisation (cache-aware models)
        else if (norm != "per_feature")
            reject(g, norm_key + " '" + norm + "' is not supported (per_feature or NA)");
    }
    if ((p.n_fft & (p.n_fft - 1)) != 0)
        reject(g, schema::short_key(schema::kPreprocessorNFft) + " must be a power of two");
    if (p.mag_power != 2.0f && p.mag_power != 1.0f)
        reject(g, schema::short_key(schema::kPreprocessorMagPower) + " must be 1 or 2");
    return p;
}

namespace {

// The cache-aware keys: att_context_style chunked_limited with its contexts (presets, else the
// left/right pair), causal subsampling and convolutions. The parakeet.streaming.* sizes are
// derived from a context and not read.
void read_streaming(const GgufReader& g, EncoderConfig& e) {
    e.causal_subsampling = get_flag(g, schema::kEncoderCausalDownsampling, false);
    e.causal_conv = get_flag(g, schema::kEncoderConvCausal, false);
    const std::string style_key = schema::kEncoderAttContextStyle;
    const std::string style = g.has_key(style_key) ? g.get_string(style_key) : "regular";
    if (style == "regular") return;
    if (style != "chunked_limited")
        reject(g, style_key + " '" + style + "' is not supported (regular or chunked_limited)");
    std::vector<int64_t> flat;
    if (g.has_key(schema::kEncoderAttContextPresets)) flat = g.get_i64_array(schema::kEncoderAttContextPresets);
    if (flat.empty()) {
        flat = {get_int(g, schema::kEncoderAttContextLeft, 0, 1 << 16),
                get_int(g, schema::kEncoderAttContextRight, 0, 1 << 16)};
    }
    if (flat.size() % 2 != 0)
        reject(g, std::string(schema::kEncoderAttContextPresets) + " must hold [left, right] pairs");
    for (size_t i = 0; i < flat.size(); i += 2) {
        const int64_t L = flat[i], R = flat[i + 1];
        if (L < 0 || R < 0 || L > (1 << 16) || R > (1 << 16))
            reject(g, "attention context [" + std::to_string(L) + ", " + std::to_string(R) + "] is out of range");
        if (L % (R + 1) != 0)
            reject(g, "attention context [" + std::to_string(L) + ", " + std::to_string(R) +
                          "]: left must be a multiple of right + 1 (NeMo's chunked_limited rule)");
        e.att_contexts.push_back({static_cast<int>(L), static_cast<int>(R)});
    }
    // The left/right pair, when given next to presets, is the default: the first preset.
    if (g.has_key(schema::kEncoderAttContextLeft) && g.has_key(schema::kEncoderAttContextRight)) {
        const AttContext first{get_int(g, schema::kEncoderAttContextLeft, 0, 1 << 16),
                               get_int(g, schema::kEncoderAttContextRight, 0, 1 << 16)};
        if (!(first == e.att_contexts.front()))
            reject(g, "att_context_left/right differ from the first of att_context_presets");
    }
}

}  // namespace

EncoderConfig read_encoder_config(const GgufReader& g) {
    EncoderConfig e;
    e.feat_in = get_int(g, schema::kEncoderFeatIn, 1, 512);
    e.d_model = get_int(g, schema::kEncoderDModel, 8, 8192);
    e.n_layers = get_int(g, schema::kEncoderNLayers, 1, 256);
    e.n_heads = get_int(g, schema::kEncoderNHeads, 1, 256);
    e.ff_dim = get_int(g, schema::kEncoderFfDim, 1, 65536);
    e.conv_kernel = get_int(g, schema::kEncoderConvKernel, 1, 255);
    e.subsampling_factor = get_int(g, schema::kEncoderSubsamplingFactor, 1, 64);
    e.subsampling_channels = get_int(g, schema::kEncoderSubsamplingConvChannels, 1, 4096);
    const int default_pos_len = 5000;
    e.pos_emb_max_len = get_int(g, schema::kEncoderPosEmbMaxLen, 1, 1 << 20, &default_pos_len);
    e.xscaling = get_flag(g, schema::kEncoderXscaling, true);
    e.use_bias = get_flag(g, schema::kEncoderUseBias, true);
    const std::string norm_key = schema::kEncoderConvNormType;
    if (g.has_key(norm_key)) {
        const std::string norm = g.get_string(norm_key);
        if (norm == "batch_norm") e.conv_norm_is_batch_norm = true;
        else if (norm == "layer_norm") e.conv_norm_is_batch_norm = false;
        else reject(g, norm_key + " '" + norm + "' is not supported (batch_norm or layer_norm)");
    }
    if (e.d_model % e.n_heads != 0)
        reject(g, schema::short_key(schema::kEncoderDModel) + " must be a multiple of " +
                      schema::short_key(schema::kEncoderNHeads));
    if (e.conv_kernel % 2 == 0) reject(g, schema::short_key(schema::kEncoderConvKernel) + " must be odd");
    read_streaming(g, e);
    if (e.subsampling_factor != 8)
        reject(g, schema::short_key(schema::kEncoderSubsamplingFactor) + " " + std::to_string(e.subsampling_factor) +
                      " is not supported (dw_striding with factor 8 only)");
    return e;
}

const char* arch_name(Arch a) {
    switch (a) {
        case Arch::Ctc: return "ctc";
        case Arch::Rnnt: return "rnnt";
        case Arch::Tdt: return "tdt";
        case Arch::HybridRnntCtc: return "hybrid_rnnt_ctc";
        case Arch::HybridTdtCtc: return "hybrid_tdt_ctc";
    }
    return "?";
}

ModelConfig read_model_config(const GgufReader& g) {
    if (!g.has_key(schema::kGeneralArchitecture))
        reject(g, std::string("not a model file (no ") + schema::kGeneralArchitecture + " key)");
    const std::string general_arch = g.get_string(schema::kGeneralArchitecture);
    if (general_arch != schema::kArchitecture)
        reject(g, std::string(schema::kGeneralArchitecture) + " is '" + general_arch + "', expected '" +
                      schema::kArchitecture + "'");
    if (!g.has_key(schema::kArch)) reject(g, std::string("missing key ") + schema::kArch);
    // Tensors such as norms and biases are read in place from the mapped file as floats; an
    // alignment of 1 or 2 would hand the kernels misaligned float pointers.
    if (g.alignment() < kMinTensorAlignment)
        reject(g, "general.alignment = " + std::to_string(g.alignment()) + " is below " +
                      std::to_string(kMinTensorAlignment) + ", the alignment of the f32 tensors read in place");

    ModelConfig c;
    c.arch = parse_arch(g, g.get_string(schema::kArch));
    c.pre = read_preprocessor_config(g);
    c.enc = read_encoder_config(g);
    if (c.enc.feat_in != c.pre.n_mels)
        reject(g, schema::short_key(schema::kEncoderFeatIn) + " (" + std::to_string(c.enc.feat_in) + ") differs from " +
                      schema::short_key(schema::kPreprocessorNMels) + " (" + std::to_string(c.pre.n_mels) + ")");
    c.vocab_size = get_int(g, schema::kVocabSize, 1, 1 << 20);
    c.blank_id = get_int(g, schema::kBlankId, 0, 1 << 20, &c.vocab_size);
    if (c.blank_id != c.vocab_size)
        reject(g, std::string(schema::kBlankId) + " must equal " + schema::kVocabSize + " (blank is the last class)");
    c.pieces = g.get_string_array(schema::kTokenizerPieces);
    if (static_cast<int>(c.pieces.size()) != c.vocab_size)
        reject(g, std::string(schema::kTokenizerPieces) + " has " + std::to_string(c.pieces.size()) + " entries, " +
                      schema::kVocabSize + " is " + std::to_string(c.vocab_size));
    const std::string scores_key = schema::kTokenizerScores;
    if (g.has_key(scores_key)) {
        c.scores = g.get_f32_array(scores_key);
        if (c.scores.size() != c.pieces.size())
            reject(g, std::string(schema::kTokenizerScores) + " has " + std::to_string(c.scores.size()) + " entries, " +
                          schema::kTokenizerPieces + " has " + std::to_string(c.pieces.size()));
    }

    if (c.has_transducer()) {
        c.pred_hidden = get_int(g, schema::kDecoderPredHidden, 1, 16384);
        c.pred_rnn_layers = get_int(g, schema::kDecoderPredRnnLayers, 1, 16);
        c.joint_hidden = get_int(g, schema::kJointJointHidden, 1, 16384);
        c.max_symbols = get_int(g, schema::kDecodingMaxSymbols, 1, 1000, &c.max_symbols);
        const std::string act_key = schema::kJointActivation;
        if (g.has_key(act_key) && g.get_string(act_key) != "relu")
            reject(g, act_key + " '" + g.get_string(act_key) + "' is not supported (relu only)");
    }
    if (c.is_tdt()) {
        const std::string key = schema::kTdtDurations;
        if (!g.has_key(key)) reject(g, "missing key " + key);
        for (int64_t d : g.get_i64_array(key)) {
            if (d < 0 || d > 1000) reject(g, key + " holds an out-of-range duration");
            c.durations.push_back(static_cast<int>(d));
        }
        if (c.durations.empty()) reject(g, key + " is empty");
        // A blank moves the decoder on by its duration: with only 0s it could never advance.
        if (std::find_if(c.durations.begin(), c.durations.end(), [](int d) { return d != 0; }) == c.durations.end())
            reject(g, key + " holds no non-zero duration");
    }
    return c;
}

}  // namespace pk
