// DiarConfig: the hyper-parameters of a Sortformer diarization model, read from its GGUF keys:
// ours (parakeet-cli convert) or parakeet.cpp's diarization schema, which lacks the
// transformer's size (read off the tensors then) and its head count.
#pragma once

#include <cstdint>

#include "model/model_config.h"

namespace pk {

class GgufReader;

// NeMo's SortformerModules streaming parameters (the checkpoint's own, in 80 ms frames; the
// member defaults are NeMo's, a parakeet.cpp file without the keys gets its loader's defaults).
struct DiarStreamingConfig {
    bool streaming_mode = false;  // the checkpoint's diarize() runs forward_streaming
    int chunk_len = 188;
    int chunk_left_context = 1;
    int chunk_right_context = 1;
    int fifo_len = 0;
    int spkcache_len = 188;
    int spkcache_update_period = 188;
    int spkcache_sil_frames_per_spk = 3;
    float sil_threshold = 0.2f;
    float pred_score_threshold = 0.25f;
    float scores_boost_latest = 0.05f;
    float strong_boost_rate = 0.75f;
    float weak_boost_rate = 1.5f;
    float min_pos_scores_rate = 0.5f;
};

struct DiarConfig {
    PreprocessorConfig pre;
    EncoderConfig enc;       // the FastConformer (fc_d_model = enc.d_model)
    int n_speakers = 4;
    int tf_d_model = 0;      // the transformer's width; encoder_proj maps fc -> tf when they differ
    int tf_n_layers = 0;
    int tf_n_heads = 8;      // parakeet.cpp's files do not say: then the encoder's n_heads
    int tf_inner_size = 0;
    int upsample_factor = 8;  // 10 ms units per output frame
    double frame_sec = 0.08;
    float onset = 0.5f;       // the file's default post-processing thresholds
    float offset = 0.5f;
    DiarStreamingConfig streaming;

    bool has_encoder_proj() const { return enc.d_model != tf_d_model; }
};

// Reads and validates the configuration of a diarization file (parakeet.arch "diarization").
// Throws ModelError naming the key or tensor at fault.
DiarConfig read_diar_config(const GgufReader& gguf);

}  // namespace pk
