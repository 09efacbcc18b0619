// Model: a loaded Parakeet model — the GGUF mapping, its configuration, the front end, the
// encoder and the decoders — and the pipeline that turns audio into a Transcript.
//
// Everything in a Model is built at load and read-only afterwards, so any number of requests
// may run on it at once, each on its own Backend (thread team + arena). A request's
// intermediates live in that backend's arena.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/decoder/ctc_decoder.h"
#include "model/decoder/transducer_decoder.h"
#include "model/encoder/encoder.h"
#include "model/frontend/audio_input.h"
#include "model/encoder/prompt_kernel.h"
#include "model/frontend/log_mel.h"
#include "model/frontend/resample.h"
#include "model/frontend/resampler_cache.h"
#include "model/load_options.h"
#include "model/model_config.h"
#include "model/request_options.h"
#include "model/request_progress.h"
#include "model/text/tokenizer.h"
#include "model/transcript/transcript.h"
#include "model/transcript/word_timestamps.h"
#include "runtime/backend.h"
#include "runtime/backend_pool.h"
#include "runtime/request_pool.h"
#include "runtime/cpu_features.h"

namespace pk {

// Mel features of one request, in the backend's arena.
struct MelFeatures {
    const float* data = nullptr;  // [frames, n_mels], time-major
    int64_t frames = 0;           // all frames (NeMo: 1 + samples / hop)
    int64_t valid = 0;            // frames that count (NeMo's mel_len)
};

// Encoder output of one request, in the backend's arena.
struct EncoderOutput {
    const float* data = nullptr;  // [frames, d_model], time-major
    int64_t frames = 0;           // every frame is valid (NeMo's enc_len)
};

// The CTC head's log-softmax output of one request: [frames, classes] row-major, blank last.
struct CtcLogProbs {
    std::vector<float> data;
    int64_t frames = 0;
    int classes = 0;
};

// One hypothesis of an N-best list (Model::transcribe_nbest): its transcript and NeMo's scores.
struct ScoredTranscript {
    Transcript transcript;
    double score = 0.0;             // sum of the hypothesis' log-probabilities
    double normalized_score = 0.0;  // score / (tokens + 1)
};

// After a request, a backend's arena holding more than this gives its memory back (see
// Arena::release_if_above): short requests keep reusing theirs, while one long recording
// (an hour of audio takes several hundred MB) does not pin its peak in a server for good.
constexpr size_t kArenaKeepBytes = size_t{256} << 20;

// Shared by the loaders of the FastConformer kinds (ASR, diarization):
// The level a model runs: the requested one if the CPU has it (Unsupported otherwise), else
// the CPU's highest. The one place a model's level is chosen; the weights are packed for it
// and the components keep its kernel table.
IsaLevel checked_isa_level(const std::optional<IsaLevel>& requested);
// The log-mel front end from the file's window and filterbank (ModelError when absent).
std::unique_ptr<LogMel> load_log_mel(const TensorLoader& t, const PreprocessorConfig& p);

class Model {
public:
    // Maps and validates the file, reads the configuration and builds every component with
    // `options`. Every kernel of the model then runs at one ISA level (options.isa, else the
    // CPU's highest): the weights are packed for it and the components keep its kernel table
    // (kernels/kernel_table.h). Throws GgufError (not a readable GGUF), ModelError (not a model
    // this engine runs) or Unsupported (an instruction set or bf16 this CPU lacks).
    static std::unique_ptr<Model> load(const std::string& path, const LoadOptions& options = {});
    // ... from a file already open, or a bundle's component (GgufReader::prefixed_view); path()
    // is then the reader's name.
    static std::unique_ptr<Model> load(GgufReader gguf, const LoadOptions& options = {});

    const ModelConfig& config() const { return config_; }
    const GgufReader& gguf() const { return gguf_; }
    const std::string& path() const { return path_; }
    // Bytes of weights repacked at load (beyond the mapped file).
    size_t packed_bytes() const { return encoder_->packed_bytes(); }

    // The whole pipeline for one request: borrows a backend (the pool's, or the process-wide
    // default), checks and resamples the audio, and returns the transcript. Any length that
    // fits in memory is accepted. Thread-safe. Throws InvalidArgument for bad audio or a head
    // the model does not have, Cancelled when the options' progress callback says stop.
    Transcript transcribe(const float* samples, int64_t n, int sample_rate, const RequestOptions& options) const;

    // Same, taking the samples over: once they are resampled to the model's rate (inputs at
    // another rate), they are freed, so a long file never exists at two rates at once.
    Transcript transcribe(std::vector<float>&& samples, int sample_rate, const RequestOptions& options) const;

    // NeMo's transducer beam search (options.beam: beam_size >= nbest >= 1) on the same front
    // end and encoder: the best options.beam.nbest hypotheses, best first (model_beam.cpp).
    // Throws InvalidArgument without a TDT/RNN-T head or for bad beam options.
    std::vector<ScoredTranscript> transcribe_nbest(const float* samples, int64_t n, int sample_rate,
                                                   const RequestOptions& options) const;

    // The CTC head's log-probabilities for the audio (what NeMo's ctc_decoder returns), from
    // the same front end and encoder as transcribe(). Throws InvalidArgument without a CTC head.
    CtcLogProbs ctc_log_probs(const float* samples, int64_t n, int sample_rate, const RequestOptions& options) const;

    // Same, on a backend the caller already holds (locked).
    Transcript transcribe_on(Backend& b, const float* samples, int64_t n, int sample_rate,
                             const RequestOptions& options) const;

    // The attention requests use unless their options say otherwise: at load,
    // LoadOptions::attention. Applies to requests that start afterwards.
    void set_attention(const AttentionSetting& a);
    AttentionSetting attention() const;
    // What runs on `frames` encoder frames when a request asks for `requested` (unset: the
    // model's setting): resolve()d, for offline models; for a cache-aware model always its
    // chunked-limited attention with its default context, as NeMo's transcribe() does (Auto
    // and the model's own contexts are accepted, full or local attention is Unsupported).
    AttentionSetting resolve_attention(const std::optional<AttentionSetting>& requested, int64_t frames) const;

    const FastConformerEncoder& encoder() const { return *encoder_; }
    const LogMel& log_mel() const { return *log_mel_; }

    // Whether the encoder's F32/F16 matrices were rounded to bfloat16 at load (LoadOptions::bf16,
    // model/layers/bf16_at_load.h).
    bool bf16_encoder() const { return bf16_; }
    // The ISA level every kernel of this model runs at, chosen at load (LoadOptions::isa).
    IsaLevel isa() const { return isa_; }

    // Turns on a pool of `backends` backends with `threads_each` threads each (<= 0: the
    // model's thread budget, LoadOptions::threads or else default_thread_count(), divided among
    // them, at least 1 each); backends <= 1 removes the pool and runs requests on the
    // process-wide default backend, or, when the model has a thread budget of its own, on one
    // backend of its own with that many threads. Requests already running finish on the pool
    // they started on. Returns the number of backends now in use.
    int set_concurrency(int backends, int threads_each);
    // The threads a request may use: LoadOptions::threads, or else default_thread_count().
    int thread_budget() const;
    // Backends serving requests at once: the pool's size, 1 without a pool.
    int backends() const;
    // Sum of the pool's arenas (0 without a pool).
    size_t pool_working_set_bytes() const;

    // Checks the length, buffer and sample rate of a request's audio (InvalidArgument) and returns
    // its length at the model's rate.
    int64_t resampled_length(const float* samples, int64_t n, int sample_rate) const;
    // Checks a request's audio (finite samples, sample rate, length) and brings it to the
    // model's sample rate in the arena. Throws InvalidArgument.
    const float* prepare_audio(Backend& b, const float* samples, int64_t n, int sample_rate,
                               int64_t* n_out) const;

    // A backend for one unit of work on the calling thread: the pool's (waiting for a free
    // one) or the process-wide default. Held only while it computes.
    BackendLease lease_backend() const { return pool_->lease(); }

    // The stages of the pipeline; `b` must be locked by the caller.
    MelFeatures compute_mel(Backend& b, const float* samples, int64_t n) const;
    // The encoder on `mel`, with the model's attention setting unless `attention` is given.
    EncoderOutput encode(Backend& b, const MelFeatures& mel,
                         const FastConformerEncoder::StageObserver& observe = {},
                         const std::optional<AttentionSetting>& attention = {}) const;

    // Whether `decoder` means the CTC head (Default: the transducer when there is one). Throws
    // InvalidArgument when the model has no such head.
    bool uses_ctc(DecoderChoice decoder) const;
    // Prompt-conditioned models: the prompt id of `language` (empty: the default; throws
    // InvalidArgument naming the known locales for another); -1 for other models, which ignore it.
    int prompt_id(const std::string& language) const;
    // The prompt network on encoder output enc [T, d_model], in place; nothing for prompt -1.
    void apply_prompt(Backend& b, float* enc, int64_t T, int prompt) const;

    // The decoders, when the model has them.
    const TransducerDecoder* transducer() const { return transducer_.get(); }
    const CtcDecoder* ctc() const { return ctc_.get(); }
    const TranscriptBuilder& transcript_builder() const { return *builder_; }

    // Largest pool size set_concurrency accepts.
    static constexpr int kMaxBackends = RequestPool::kMaxBackends;

private:
    Model(std::string path, GgufReader gguf);
    // A request's front end and encoder on `b` (arena reset first): the encoder output, in the
    // arena, and the attention it ran. Frees `release` (the owner of `samples`) once resampled.
    struct EncodedRequest {
        float* data = nullptr;  // [frames, d_model]
        int64_t frames = 0;
        AttentionSetting attention = AttentionSetting::full();
        ProgressSpan decoding;  // the request's progress from the encoder's end to the result
    };
    EncodedRequest encode_request(Backend& b, const float* samples, int64_t n, int sample_rate,
                                  const RequestOptions& options, std::vector<float>* release,
                                  const ProgressSpan& progress) const;
    // The request-decoding step every offline request shares (run, transcribe_nbest,
    // ctc_log_probs), on `b`: the front end and encoder (encode_request, reporting progress to
    // options.progress), then `decode(const EncodedRequest&)`, which decodes and builds the
    // result, then progress 1; last, the arena gives back its memory above kArenaKeepBytes.
    // Returns what `decode` returned.
    template <class Decode>
    auto with_encoded_request(Backend& b, const float* samples, int64_t n, int sample_rate,
                              const RequestOptions& options, std::vector<float>* release, Decode&& decode) const;
    // The transducer's tokens for an encoded request: greedy, or the best beam hypothesis when
    // options.beam asks for beam search (model_beam.cpp).
    std::vector<TranscriptToken> transducer_tokens(Backend& b, const float* enc, int64_t frames,
                                                   const RequestOptions& options) const;
    // transcribe_on, freeing `release` (the owner of `samples`) once it is no longer read.
    Transcript run(Backend& b, const float* samples, int64_t n, int sample_rate, const RequestOptions& options,
                   std::vector<float>* release) const;

    std::string path_;
    GgufReader gguf_;
    ModelConfig config_;
    std::unique_ptr<LogMel> log_mel_;
    std::unique_ptr<FastConformerEncoder> encoder_;
    std::unique_ptr<TransducerDecoder> transducer_;
    std::unique_ptr<CtcDecoder> ctc_;
    std::unique_ptr<PromptKernel> prompt_;  // prompt-conditioned models only
    std::unique_ptr<Tokenizer> tokenizer_;
    std::unique_ptr<TranscriptBuilder> builder_;

    // The backends requests run on (LoadOptions::threads is its thread budget).
    std::unique_ptr<RequestPool> pool_;

    mutable std::mutex attention_mu_;
    AttentionSetting attention_;
    bool bf16_ = false;
    IsaLevel isa_ = IsaLevel::Scalar;

    std::unique_ptr<AudioInput> audio_;  // checks and resamples the requests' audio
};

template <class Decode>
auto Model::with_encoded_request(Backend& b, const float* samples, int64_t n, int sample_rate,
                                 const RequestOptions& options, std::vector<float>* release,
                                 Decode&& decode) const {
    RequestProgress progress(options.progress);
    const ProgressSpan whole{&progress, 0.0, 1.0};
    whole.at(0.0);
    auto result = decode(encode_request(b, samples, n, sample_rate, options, release, whole));
    whole.at(1.0);
    b.arena().release_if_above(kArenaKeepBytes);
    return result;
}

}  // namespace pk
