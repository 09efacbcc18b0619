// ModelConfig: the hyper-parameters of a Parakeet model, read from the `parakeet.*` keys of its
// GGUF file (the schema the published parakeet.cpp files use) and checked for what this
// engine can run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pk {

class GgufReader;

enum class Arch { Ctc, Rnnt, Tdt, HybridRnntCtc, HybridTdtCtc };

const char* arch_name(Arch a);

struct PreprocessorConfig {
    int sample_rate = 16000;
    int n_mels = 80;
    int n_fft = 512;
    int win_length = 400;
    int hop_length = 160;
    float preemph = 0.97f;
    float mag_power = 2.0f;
    float log_zero_guard = 5.9604644775390625e-08f;  // 2^-24
    bool normalize_per_feature = true;
};

// One attention context [left, right] of a cache-aware streaming encoder, in encoder frames:
// chunks of right + 1 frames, each frame seeing its chunk and the `left` frames before it.
struct AttContext {
    int left = 0;
    int right = 0;
    bool operator==(const AttContext& o) const { return left == o.left && right == o.right; }
};

struct EncoderConfig {
    int feat_in = 80;
    int d_model = 0;
    int n_layers = 0;
    int n_heads = 0;
    int ff_dim = 0;
    int conv_kernel = 9;
    bool conv_norm_is_batch_norm = true;  // else layer_norm
    int subsampling_factor = 8;
    int subsampling_channels = 0;
    bool xscaling = true;
    int pos_emb_max_len = 5000;
    bool use_bias = true;
    // Cache-aware streaming encoders (NeMo att_context_style chunked_limited): the contexts the
    // model was trained with, the first the default; empty for offline models. Causal
    // subsampling pads its convolutions 2 before and 1 after (CausalConv2D); causal depthwise
    // convolutions pad kernel - 1 before and none after.
    std::vector<AttContext> att_contexts;
    bool causal_subsampling = false;
    bool causal_conv = false;

    int head_dim() const { return d_model / n_heads; }
    bool chunked_limited() const { return !att_contexts.empty(); }
    // Cache-aware streaming needs all three.
    bool cache_aware() const { return chunked_limited() && causal_subsampling && causal_conv; }
};

struct ModelConfig {
    Arch arch = Arch::Tdt;
    PreprocessorConfig pre;
    EncoderConfig enc;
    int vocab_size = 0;  // without blank
    int blank_id = 0;    // == vocab_size
    std::vector<std::string> pieces;
    // SentencePiece scores by token id (parakeet.tokenizer.scores; empty when the file has
    // none): what phrase text is segmented with (model/text/bpe_encoder.h).
    std::vector<float> scores;

    // Transducer heads (rnnt, tdt, hybrid_*).
    int pred_hidden = 0;
    int pred_rnn_layers = 0;
    int joint_hidden = 0;
    int max_symbols = 10;
    std::vector<int> durations;  // TDT only, e.g. {0, 1, 2, 3, 4}

    bool has_transducer() const { return arch != Arch::Ctc; }
    bool is_tdt() const { return arch == Arch::Tdt || arch == Arch::HybridTdtCtc; }
    bool has_ctc() const { return arch == Arch::Ctc || arch == Arch::HybridRnntCtc || arch == Arch::HybridTdtCtc; }
    // Seconds per encoder frame (0.08 for 10 ms hops and 8× subsampling).
    double frame_seconds() const {
        return static_cast<double>(pre.hop_length) * enc.subsampling_factor / pre.sample_rate;
    }
};

// The least general.alignment a model file may have: f32 tensors are read in place.
constexpr uint32_t kMinTensorAlignment = 4;

// Reads and validates the configuration. Throws ModelError for a file that is not a Parakeet
// model or holds settings this engine does not support (the message says which key).
ModelConfig read_model_config(const GgufReader& gguf);

// Typed reads of one key for the kinds' config readers (ModelError naming the key): `full`
// as an int in [lo, hi] (a missing key takes *fallback when given, else fails); a float or a
// flag (bool or integer), `fallback` when missing.
int get_int(const GgufReader& g, const std::string& full, int lo, int hi, const int* fallback = nullptr);
float get_float(const GgufReader& g, const std::string& full, float fallback);
bool get_flag(const GgufReader& g, const std::string& full, bool fallback);

// The preprocessor and encoder sections alone (parakeet.preprocessor.*, parakeet.encoder.*),
// which every FastConformer-based kind shares (the diarizer's loader reads them too). Throw
// ModelError as above.
PreprocessorConfig read_preprocessor_config(const GgufReader& gguf);
EncoderConfig read_encoder_config(const GgufReader& gguf);

}  // namespace pk
