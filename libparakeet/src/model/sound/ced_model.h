// CED (Xiaomi's AudioSet taggers, ced.cpp's `ced` GGUF): a ViT over 16×16 patches of the dB mel
// spectrogram with a sigmoid multi-label head. For one chunk of T frames (mel-major [64, T]):
//   BatchNorm over the mels → Conv2d(1→D, 16×16, stride 16) → [D, n_mels/16, Tg] →
//   + time_pos_embed[:Tg] + freq_pos_embed → tokens freq-major (f·Tg + t) →
//   depth × pre-norm blocks (LN → MHSA → +, LN → fc1 → erf GELU → fc2 → +) → LN →
//   mean over tokens → LN → Linear → sigmoid.
// A clip longer than target_length frames is cut into target_length-frame chunks after the
// front end (the last one unpadded, dropped when shorter than a patch) and the chunks'
// probabilities averaged, as ced.cpp does.
//
// The attention's products run in f32 for an F32 file; for a file whose weights are already
// quantised (F16, Q8_0, ...) on int8 scores and bf16 weighted sums where the CPU has AVX512_BF16
// (kernels::AttentionProducts::Int8Bf16): about 1.7 times faster, at the precision of the Q8_0
// products' activations.
//
// A loaded model is immutable: any number of requests run on it at once, each on its own
// team and arena. Work is split by output (rows, heads × queries), so the scores are bitwise
// the same at any thread count for a given ISA level.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "kernels/attention_dot_product.h"
#include "model/layers/linear.h"
#include "model/load_options.h"
#include "model/sound/ced_frontend.h"
#include "runtime/arena.h"
#include "runtime/cpu_features.h"
#include "runtime/request_pool.h"
#include "runtime/thread_team.h"

namespace pk {

struct CedConfig {
    int embed_dim = 0, depth = 0, num_heads = 0, mlp_hidden = 0, n_classes = 0;
    int patch = 16;            // patch size = stride
    int target_length = 1012;  // frames per chunk
    int n_mels = 64;
    int sample_rate = 16000;
    float ln_eps_encoder = 1e-6f, ln_eps_head = 1e-5f;
};

class CedModel {
public:
    // Loads and checks a `ced` GGUF with options' ISA level (unset: the CPU's highest; above
    // it: Unsupported) and thread budget. Throws ModelError for a malformed or foreign file
    // (another model kind is refused naming it) or GgufError. The model keeps the file open:
    // its F32 tensors are read in place.
    static std::unique_ptr<CedModel> load(GgufReader gguf, const LoadOptions& options = {});

    const CedConfig& config() const { return cfg_; }
    const std::vector<std::string>& labels() const { return labels_; }
    const CedFrontend& frontend() const { return *frontend_; }
    IsaLevel isa() const { return level_; }
    // The fewest samples a clip may have: one patch of frames.
    int64_t min_samples() const;

    // The class probabilities of n samples of 16 kHz mono audio (n >= min_samples(), else
    // InvalidArgument), chunked and averaged.
    std::vector<float> classify(ThreadTeam& team, Arena& arena, const float* samples, int64_t n) const;
    // The same on a backend leased for the call: the process-wide default one, or one of the
    // model's own thread budget (concurrent calls take turns on it).
    std::vector<float> classify(const float* samples, int64_t n) const;
    // The probabilities of frames [t0, t0 + len) of a dB mel spectrogram db [n_mels, T]
    // (patch <= len <= target_length).
    std::vector<float> chunk_probabilities(ThreadTeam& team, Arena& arena, const float* db, int64_t T, int64_t t0,
                                           int64_t len) const;

private:
    explicit CedModel(GgufReader gguf) : gguf_(std::move(gguf)) {}

    struct Norm {
        const float* weight = nullptr;
        const float* bias = nullptr;
    };
    struct Block {
        Norm norm1, norm2;
        Linear qkv, proj, fc1, fc2;
    };
    void patch_embed(ThreadTeam& team, Arena& arena, const float* db, int64_t T, int64_t t0, int64_t tg, float* x) const;
    void attention(ThreadTeam& team, Arena& arena, const Block& b, const float* h, int64_t n, float* out) const;
    // The residual add of a sub-layer's output h to the stream x [n, D] and the next LayerNorm
    // of x into h, in one job (each row by one thread: the same bits as two).
    void add_then_norm(ThreadTeam& team, float* x, float* h, int64_t n, const Norm& norm) const;

    GgufReader gguf_;
    CedConfig cfg_;
    IsaLevel level_ = IsaLevel::Scalar;
    const kernels::KernelTable* kernels_ = nullptr;
    kernels::AttentionProducts attention_products_ = kernels::AttentionProducts::F32;
    std::vector<std::string> labels_;
    std::unique_ptr<CedFrontend> frontend_;
    const float* bn_weight_ = nullptr;
    const float* bn_bias_ = nullptr;
    const float* bn_mean_ = nullptr;
    const float* bn_var_ = nullptr;
    float bn_eps_ = 1e-5f;
    std::unique_ptr<kernels::PackedWeights> patch_proj_;  // [D][patch * patch]
    const float* patch_bias_ = nullptr;
    const float* time_pos_ = nullptr;      // [D][time_pos_stride_]
    int time_pos_stride_ = 0;
    const float* freq_pos_ = nullptr;      // [D][n_mels / patch]
    std::vector<Block> blocks_;
    Norm norm_, head_norm_;
    Linear head_;
    std::unique_ptr<RequestPool> pool_;
};

}  // namespace pk
