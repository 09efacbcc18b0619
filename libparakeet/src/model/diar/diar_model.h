// DiarModel: a loaded Sortformer diarizer (NeMo's SortformerEncLabelModel) — the log-mel front
// end and FastConformer encoder shared with ASR, encoder_proj, NeMo's post-LN transformer and
// the sigmoid speaker head — and the offline path of NeMo's diarize().
//
// Everything is built at load and read-only afterwards: requests run concurrently, each on a
// backend of the model's RequestPool, and give the same bits at any pool size and thread
// count. The network's pieces are public so that the streaming path (forward_streaming: the
// speaker cache and FIFO) can run them on its own concatenations.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/diar/diar_config.h"
#include "model/diar/transformer_encoder.h"
#include "model/encoder/encoder.h"
#include "model/frontend/audio_input.h"
#include "model/frontend/log_mel.h"
#include "model/load_options.h"
#include "model/model.h"
#include "model/request_progress.h"
#include "runtime/request_pool.h"

namespace pk {

// Per-frame speaker probabilities of one request.
struct SpeakerProbabilities {
    std::vector<float> data;  // [frames, n_speakers], row-major
    int64_t frames = 0;
    int n_speakers = 0;
    double frame_sec = 0.08;
};

class DiarModel {
public:
    // Maps and validates the file and builds the network (at options.isa, else the CPU's
    // level). Throws GgufError, ModelError (not a diarization model this engine runs; an ASR
    // file is refused naming its kind) or Unsupported.
    static std::unique_ptr<DiarModel> load(const std::string& path, const LoadOptions& options = {});
    // ... from a file already open, or a bundle's component; path() is then the reader's name.
    static std::unique_ptr<DiarModel> load(GgufReader gguf, const LoadOptions& options = {});

    const DiarConfig& config() const { return config_; }
    const std::string& path() const { return path_; }
    IsaLevel isa() const { return isa_; }

    // NeMo's offline diarize() (streaming_mode off): the waveform at the model's rate scaled
    // by 1 / (max(x) + 1e-3) (the signed maximum, as NeMo), log-mel over the whole clip, the
    // encoder, projection, transformer and head. Borrows a backend. No audio gives 0 frames.
    // `progress` hears 0, the front end's end, each conformer layer's row chunks, and 1 after
    // the head (the stages' shares are in diar_model.cpp); reports never change the result.
    // Throws InvalidArgument / InvalidAudio for bad audio, Cancelled when `progress` says stop.
    SpeakerProbabilities probabilities(const float* samples, int64_t n, int sample_rate,
                                       const ProgressSpan& progress = {}) const;
    // Same, on a backend the caller holds.
    SpeakerProbabilities probabilities_on(Backend& b, const float* samples, int64_t n, int sample_rate,
                                          const ProgressSpan& progress = {}) const;

    // The network on a whole clip's log-mel features (mel_frames valid rows, already scaled or
    // not as the caller's path wants): probs [output_frames(mel_frames), n_speakers].
    void mel_probabilities(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames, float* probs) const;

    // ---- the network's pieces, on a locked backend's team and arena ----
    // Mel frames (valid ones, NeMo's mel_len) and encoder frames for n samples at the model's rate.
    int64_t mel_frames(int64_t n) const { return log_mel_->valid_frames(n); }
    int64_t output_frames(int64_t mel_frames) const { return encoder_->output_frames(mel_frames); }
    // The log-mel of n samples (model rate, unscaled) into mel [mel_frames(n) rows used, n_mels].
    // mel must hold log_mel().n_frames(n) rows.
    const LogMel& log_mel() const { return *log_mel_; }
    // encoder.pre_encode alone (the pre-encode embeddings, before x-scaling): mel [mel_frames,
    // n_mels] -> out [output_frames(mel_frames), fc_d_model].
    void pre_encode(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames, float* out) const;
    // The conformer layers (x-scaling, relative positions, full attention) on pre-encode
    // embeddings x [T, fc_d_model], in place: NeMo's encoder with bypass_pre_encode. `progress`
    // hears each layer's row chunks (it may throw Cancelled).
    void encode_layers(ThreadTeam& team, Arena& arena, float* x, int64_t T, const ProgressSpan& progress = {}) const;
    // encoder_proj (when present), the transformer and the head with the sigmoid: enc [T,
    // fc_d_model] (left unchanged) -> probs [T, n_speakers].
    void speaker_head(ThreadTeam& team, Arena& arena, const float* enc, int64_t T, float* probs) const;

    // The backends requests run on (RequestPool); Model's calls of the same names.
    int set_concurrency(int backends, int threads_each) { return pool_->set_concurrency(backends, threads_each); }
    int thread_budget() const { return pool_->thread_budget(); }
    int backends() const { return pool_->backends(); }
    size_t pool_working_set_bytes() const { return pool_->working_set_bytes(); }
    BackendLease lease_backend() const { return pool_->lease(); }

private:
    DiarModel(std::string path, GgufReader gguf) : path_(std::move(path)), gguf_(std::move(gguf)) {}

    std::string path_;
    GgufReader gguf_;
    DiarConfig config_;
    IsaLevel isa_ = IsaLevel::Scalar;
    const kernels::KernelTable* kernels_ = nullptr;
    std::unique_ptr<LogMel> log_mel_;
    std::unique_ptr<FastConformerEncoder> encoder_;
    Linear encoder_proj_;  // empty when fc_d_model == tf_d_model
    std::unique_ptr<TransformerEncoder> transformer_;
    Linear head_hidden_, head_spks_;
    std::unique_ptr<AudioInput> audio_;
    std::unique_ptr<RequestPool> pool_;
};

}  // namespace pk
