#include "model/model.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"
#include "model/gguf_schema.h"
#include "model/hotword_decode.h"
#include "model/layers/bf16_at_load.h"
#include "model/layers/q8_at_load.h"
#include "model/model_kind.h"
#include "model/request_progress.h"
#include "model/tensor_loader.h"
#include "runtime/cpu_features.h"
#include "runtime/thread_budget.h"

namespace pk {
namespace {

LogMelConfig log_mel_config(const PreprocessorConfig& p) {
    LogMelConfig c;
    c.sample_rate = p.sample_rate;
    c.n_fft = p.n_fft;
    c.win_length = p.win_length;
    c.hop_length = p.hop_length;
    c.n_mels = p.n_mels;
    c.preemph = p.preemph;
    c.mag_power = p.mag_power;
    c.log_zero_guard = p.log_zero_guard;
    c.normalize_per_feature = p.normalize_per_feature;
    return c;
}

}  // namespace

std::unique_ptr<LogMel> load_log_mel(const TensorLoader& t, const PreprocessorConfig& p) {
    const int64_t bins = p.n_fft / 2 + 1;
    const float* window = t.f32(schema::kMelWindow, {p.win_length});
    const float* fb = t.f32(schema::kMelFilterbank, {1, p.n_mels, bins});
    return std::make_unique<LogMel>(log_mel_config(p), std::vector<float>(window, window + p.win_length),
                                    std::vector<float>(fb, fb + p.n_mels * bins), t.kernels());
}

IsaLevel checked_isa_level(const std::optional<IsaLevel>& requested) {
    const IsaLevel cpu = cpu_features().detected;
    if (!requested) return cpu;
    if (!cpu_features().supports(*requested))
        throw Unsupported(std::string("the kernel level ") + isa_level_name(*requested) +
                          " is not one this CPU has (its highest is " + isa_level_name(cpu) +
                          "; a level can only be lowered)");
    return *requested;
}


Model::Model(std::string path, GgufReader gguf) : path_(std::move(path)), gguf_(std::move(gguf)) {}

std::unique_ptr<Model> Model::load(const std::string& path, const LoadOptions& options) {
    checked_isa_level(options.isa);  // a bad level is refused before the file is read
    return load(GgufReader::open(path), options);
}

std::unique_ptr<Model> Model::load(GgufReader gguf, const LoadOptions& options) {
    const IsaLevel isa = checked_isa_level(options.isa);
    if (options.bf16) check_bf16_available(isa);
    refuse_other_model_kind(gguf, ModelKind::Asr);
    std::string path = gguf.name();
    std::unique_ptr<Model> m(new Model(std::move(path), std::move(gguf)));
    m->isa_ = isa;
    m->attention_ = options.attention;
    m->config_ = read_model_config(m->gguf_);
    m->bf16_ = options.bf16;
    m->pool_ = std::make_unique<RequestPool>(options.threads);
    const TensorLoader tensors(m->gguf_, isa, {is_quantised_model(m->gguf_) && options.q8_all, options.q8_subsampling, m->bf16_});
    m->log_mel_ = load_log_mel(tensors, m->config_.pre);
    m->audio_ = std::make_unique<AudioInput>(m->config_.pre.sample_rate);
    m->encoder_ = std::make_unique<FastConformerEncoder>(tensors, m->config_.enc);
    if (m->config_.has_transducer()) {
        // Load-time tables (the prediction net's input projections) are built on a private
        // team, so loading never waits for a backend that requests are using.
        ThreadTeam team(m->thread_budget());
        Arena arena;
        m->transducer_ = std::make_unique<TransducerDecoder>(
            TransducerDecoder::load(tensors, m->config_, team, arena));
    }
    if (m->config_.has_ctc()) m->ctc_ = std::make_unique<CtcDecoder>(CtcDecoder::load(tensors, m->config_));
    if (m->config_.prompt.present) m->prompt_ = std::make_unique<PromptKernel>(tensors, m->config_);
    m->tokenizer_ = std::make_unique<Tokenizer>(m->config_.pieces);
    m->builder_ = std::make_unique<TranscriptBuilder>(
        *m->tokenizer_, static_cast<double>(m->config_.pre.hop_length) / m->config_.pre.sample_rate,
        m->config_.enc.subsampling_factor);
    // The matrices now live repacked in memory; their file pages, read once for packing, would
    // otherwise stay resident and double the RSS of an f32 model. Tensors used straight from
    // the file (norms, biases) fault back in on first use.
    m->gguf_.drop_resident_pages();
    if (options.threads > 0) m->set_concurrency(1, options.threads);
    return m;
}

int64_t Model::resampled_length(const float* samples, int64_t n, int sample_rate) const {
    return audio_->resampled_length(samples, n, sample_rate);
}

const float* Model::prepare_audio(Backend& b, const float* samples, int64_t n, int sample_rate,
                                  int64_t* n_out) const {
    return audio_->prepare(b, samples, n, sample_rate, n_out);
}

MelFeatures Model::compute_mel(Backend& b, const float* samples, int64_t n) const {
    MelFeatures f;
    f.frames = log_mel_->n_frames(n);
    f.valid = log_mel_->valid_frames(n);
    float* mel = b.arena().alloc_array<float>(static_cast<size_t>(f.frames * config_.pre.n_mels));
    log_mel_->compute(b.team(), b.arena(), samples, n, mel);
    f.data = mel;
    return f;
}

EncoderOutput Model::encode(Backend& b, const MelFeatures& mel, const FastConformerEncoder::StageObserver& observe,
                            const std::optional<AttentionSetting>& attention) const {
    EncoderOutput e;
    e.frames = encoder_->output_frames(mel.valid);
    if (e.frames <= 0) return e;
    float* out = b.arena().alloc_array<float>(static_cast<size_t>(e.frames * config_.enc.d_model));
    encoder_->forward(b.team(), b.arena(), mel.data, mel.valid, out, resolve_attention(attention, e.frames), {},
                      observe);
    e.data = out;
    return e;
}

int Model::prompt_id(const std::string& language) const {
    return prompt_ ? config_.prompt.resolve(language) : -1;
}

void Model::apply_prompt(Backend& b, float* enc, int64_t T, int prompt) const {
    if (prompt_ && prompt >= 0) prompt_->apply(b.team(), b.arena(), enc, T, prompt);
}

void Model::set_attention(const AttentionSetting& a) {
    std::lock_guard<std::mutex> lock(attention_mu_);
    attention_ = a;
}

AttentionSetting Model::attention() const {
    std::lock_guard<std::mutex> lock(attention_mu_);
    return attention_;
}

AttentionSetting Model::resolve_attention(const std::optional<AttentionSetting>& requested, int64_t frames) const {
    const AttentionSetting a = requested.value_or(attention());
    const std::vector<AttContext>& contexts = config_.enc.att_contexts;
    if (contexts.empty()) {
        if (a.mode == AttentionSetting::Mode::Chunked)
            throw Unsupported("chunked attention applies to cache-aware streaming models; this model is offline");
        return a.resolve(frames);
    }
    if (a.mode == AttentionSetting::Mode::Chunked) {
        for (const AttContext& c : contexts)
            if (c.left == a.left && c.right == a.right) return a;
        throw Unsupported("attention context " + a.describe() + " is not one of this model's");
    }
    if (a.mode != AttentionSetting::Mode::Auto)
        throw Unsupported("this cache-aware streaming model runs the chunked-limited attention it was trained with (" +
                          AttentionSetting::chunked(contexts[0].left, contexts[0].right).describe() +
                          "); " + a.describe() + " attention applies to offline models");
    return AttentionSetting::chunked(contexts[0].left, contexts[0].right);
}

}  // namespace pk

namespace pk {

int Model::set_concurrency(int backends, int threads_each) { return pool_->set_concurrency(backends, threads_each); }
int Model::thread_budget() const { return pool_->thread_budget(); }
int Model::backends() const { return pool_->backends(); }
size_t Model::pool_working_set_bytes() const { return pool_->working_set_bytes(); }

Transcript Model::transcribe(const float* samples, int64_t n, int sample_rate,
                             const RequestOptions& options) const {
    const BackendLease lease = lease_backend();
    return transcribe_on(lease.backend(), samples, n, sample_rate, options);
}

// Shares of a request's time, for progress reports: the front end and subsampling, the
// conformer layers, the decoder.
namespace {
constexpr double kFrontEndEnd = 0.04, kEncoderEnd = 0.94;
}  // namespace

Transcript Model::transcribe(std::vector<float>&& samples, int sample_rate, const RequestOptions& options) const {
    const BackendLease lease = lease_backend();
    return run(lease.backend(), samples.data(), static_cast<int64_t>(samples.size()), sample_rate, options, &samples);
}

Transcript Model::transcribe_on(Backend& b, const float* samples, int64_t n, int sample_rate,
                                const RequestOptions& options) const {
    return run(b, samples, n, sample_rate, options, nullptr);
}

bool Model::uses_ctc(DecoderChoice decoder) const {
    const bool use_ctc = decoder == DecoderChoice::Ctc || (decoder == DecoderChoice::Default && !transducer_);
    if (use_ctc && !ctc_)
        throw Unsupported(std::string("this ") + arch_name(config_.arch) + " model has no CTC head");
    if (!use_ctc && !transducer_)
        throw Unsupported(std::string("this ") + arch_name(config_.arch) + " model has no TDT/RNN-T head");
    return use_ctc;
}

Model::EncodedRequest Model::encode_request(Backend& b, const float* samples, int64_t n, int sample_rate,
                                            const RequestOptions& options, std::vector<float>* release,
                                            const ProgressSpan& progress) const {
    Arena& arena = b.arena();
    arena.reset();
    const int prompt = prompt_id(options.language);  // an unknown locale fails before any work
    // The encoder output is allocated first, so the resampled audio and the mel features, in a
    // scope above it, are given back once subsampled: the layers reuse their memory.
    const int64_t n16 = resampled_length(samples, n, sample_rate);
    EncodedRequest e;
    e.frames = encoder_->output_frames(log_mel_->valid_frames(n16));
    e.attention = resolve_attention(options.attention, e.frames);
    e.data = e.frames > 0 ? arena.alloc_array<float>(static_cast<size_t>(e.frames * config_.enc.d_model)) : nullptr;
    {
        ArenaScope scope(arena);
        int64_t got = 0;
        const float* audio = prepare_audio(b, samples, n, sample_rate, &got);
        if (release != nullptr && audio != samples) std::vector<float>().swap(*release);
        const MelFeatures mel = compute_mel(b, audio, got);
        encoder_->subsample(b.team(), arena, mel.data, mel.valid, e.data);
    }
    progress.at(kFrontEndEnd);
    encoder_->run_layers(b.team(), arena, e.data, e.frames, e.attention, progress.sub(kFrontEndEnd, kEncoderEnd));
    apply_prompt(b, e.data, e.frames, prompt);
    e.decoding = progress.sub(kEncoderEnd, 1.0);
    return e;
}

Transcript Model::run(Backend& b, const float* samples, int64_t n, int sample_rate, const RequestOptions& options,
                      std::vector<float>* release) const {
    const bool use_ctc = options.hotwords ? hotwords_use_ctc(*this, options) : uses_ctc(options.decoder);
    if (use_ctc && options.beam.beam_size > 0) throw Unsupported("beam search needs the TDT/RNN-T head, not CTC");
    return with_encoded_request(b, samples, n, sample_rate, options, release, [&](const EncodedRequest& enc) {
        std::vector<TranscriptToken> tokens;
        ContextStats hotword_stats;
        if (enc.frames > 0 && options.hotwords) {
            tokens = hotword_tokens(*this, b, enc.data, enc.frames, use_ctc, options, &hotword_stats);
        } else if (enc.frames > 0) {
            tokens = use_ctc ? ctc_->decode(b.team(), b.arena(), enc.data, enc.frames, enc.frames)
                             : transducer_tokens(b, enc.data, enc.frames, options);
        }
        const TimestampRule rule = use_ctc ? TimestampRule::Ctc : transducer_->timestamp_rule();
        Transcript t = builder_->build(std::move(tokens), rule);
        t.attention = enc.attention;
        if (options.hotwords) t.context = hotword_stats;
        return t;
    });
}

CtcLogProbs Model::ctc_log_probs(const float* samples, int64_t n, int sample_rate, const RequestOptions& options) const {
    uses_ctc(DecoderChoice::Ctc);
    const BackendLease lease = lease_backend();
    Backend& b = lease.backend();
    return with_encoded_request(b, samples, n, sample_rate, options, nullptr, [&](const EncodedRequest& enc) {
        CtcLogProbs out;
        out.frames = enc.frames;
        out.classes = ctc_->classes();
        out.data.resize(static_cast<size_t>(out.frames * out.classes));
        if (enc.frames > 0) ctc_->log_probs(b.team(), b.arena(), enc.data, enc.frames, out.data.data());
        return out;
    });
}

}  // namespace pk
