// DiarConfig: the hyper-parameters of a Sortformer diarization model, read from its GGUF keys:
// ours (parakeet-cli convert) or parakeet.cpp's diarization schema, which lacks the
// transformer's size (read off the tensors then) and its head count.
#pragma once

#include <cstdint>

#include "model/diar/streaming_params.h"
#include "model/model_config.h"

namespace pk {

class GgufReader;

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
    bool streaming_mode = false;    // the checkpoint's diarize() runs forward_streaming
    // NeMo's SortformerModules streaming parameters: the checkpoint's own (a parakeet.cpp file
    // without the keys gets its loader's defaults).
    DiarStreamingParams streaming;

    bool has_encoder_proj() const { return enc.d_model != tf_d_model; }
};

// Reads and validates the configuration of a diarization file (parakeet.arch "diarization").
// Throws ModelError naming the key or tensor at fault.
DiarConfig read_diar_config(const GgufReader& gguf);

}  // namespace pk
