#include "model/diar/diar_model.h"

#include <algorithm>

#include "common/errors.h"
#include "kernels/ops_activation.h"
#include "model/gguf_schema.h"
#include "model/model_kind.h"
#include "model/tensor_loader.h"

namespace pk {
namespace {

constexpr float kPeakEps = 1e-3f;  // SortformerEncLabelModel.eps

// Shares of an offline pass's time, for progress reports: the front end and subsampling, the
// conformer layers, then the projection, transformer and head.
constexpr double kFrontEndEnd = 0.04, kLayersEnd = 0.85;

}  // namespace

std::unique_ptr<DiarModel> DiarModel::load(const std::string& path, const LoadOptions& options) {
    checked_isa_level(options.isa);  // a bad level is refused before the file is read
    return load(GgufReader::open(path), options);
}

std::unique_ptr<DiarModel> DiarModel::load(GgufReader gguf, const LoadOptions& options) {
    const IsaLevel isa = checked_isa_level(options.isa);
    const std::string path = gguf.name();
    if (detect_model_kind(gguf) != ModelKind::Diarization) {
        const ModelKind kind = detect_model_kind(gguf);
        throw ModelError(path + ": not a diarization model (it holds " +
                         (kind == ModelKind::None ? std::string("no known model") :
                                                    std::string("a ") + model_kind_name(kind) + " model") + ")");
    }
    std::unique_ptr<DiarModel> m(new DiarModel(path, std::move(gguf)));
    m->isa_ = isa;
    m->config_ = read_diar_config(m->gguf_);
    const DiarConfig& c = m->config_;
    const TensorLoader t(m->gguf_, isa);
    m->kernels_ = &t.kernels();
    m->log_mel_ = load_log_mel(t, c.pre);
    m->encoder_ = std::make_unique<FastConformerEncoder>(t, c.enc);
    if (c.has_encoder_proj())
        m->encoder_proj_ = Linear::load(t, schema::kDiarEncoderProj, c.tf_d_model, c.enc.d_model, true);
    else if (t.has(schema::weight(schema::kDiarEncoderProj)))
        t.fail(std::string(schema::kDiarEncoderProj) + " is present although the encoder and transformer widths are equal");
    m->transformer_ = std::make_unique<TransformerEncoder>(t, c);
    m->head_hidden_ = Linear::load(t, schema::kDiarHeadHidden, c.tf_d_model, c.tf_d_model, true);
    m->head_spks_ = Linear::load(t, schema::kDiarHeadSpks, c.n_speakers, c.tf_d_model, true);
    m->audio_ = std::make_unique<AudioInput>(c.pre.sample_rate);
    m->pool_ = std::make_unique<RequestPool>(options.threads);
    m->gguf_.drop_resident_pages();
    if (options.threads > 0) m->set_concurrency(1, options.threads);
    return m;
}

void DiarModel::pre_encode(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames, float* out) const {
    encoder_->subsample(team, arena, mel, mel_frames, out);
}

void DiarModel::encode_layers(ThreadTeam& team, Arena& arena, float* x, int64_t T,
                              const ProgressSpan& progress) const {
    if (T > 0) encoder_->run_layers(team, arena, x, T, AttentionSetting::full(), progress);
}

void DiarModel::speaker_head(ThreadTeam& team, Arena& arena, const float* enc, int64_t T, float* probs) const {
    if (T <= 0) return;
    ArenaScope scope(arena);
    const int64_t H = config_.tf_d_model;
    float* x = arena.alloc_array<float>(static_cast<size_t>(T * H));
    if (config_.has_encoder_proj()) encoder_proj_.forward(team, arena, enc, T, x);
    else std::copy(enc, enc + T * H, x);
    transformer_->forward(team, arena, x, T);
    // forward_speaker_sigmoids: relu, first_hidden_to_hidden, relu, single_hidden_to_spks, sigmoid
    float* h = arena.alloc_array<float>(static_cast<size_t>(T * H));
    kernels::relu(team, x, T * H, x);
    head_hidden_.forward(team, arena, x, T, h);
    kernels::relu(team, h, T * H, h);
    head_spks_.forward(team, arena, h, T, probs);
    kernels::sigmoid(*kernels_, team, probs, T * config_.n_speakers, probs);
}

void DiarModel::mel_probabilities(ThreadTeam& team, Arena& arena, const float* mel, int64_t mel_frames,
                                  float* probs) const {
    const int64_t T = output_frames(mel_frames);
    if (T <= 0) return;
    ArenaScope scope(arena);
    float* enc = arena.alloc_array<float>(static_cast<size_t>(T * config_.enc.d_model));
    pre_encode(team, arena, mel, mel_frames, enc);
    encode_layers(team, arena, enc, T);
    speaker_head(team, arena, enc, T, probs);
}

SpeakerProbabilities DiarModel::probabilities(const float* samples, int64_t n, int sample_rate,
                                              const ProgressSpan& progress) const {
    const BackendLease lease = lease_backend();
    return probabilities_on(lease.backend(), samples, n, sample_rate, progress);
}

SpeakerProbabilities DiarModel::probabilities_on(Backend& b, const float* samples, int64_t n, int sample_rate,
                                                 const ProgressSpan& progress) const {
    progress.at(0.0);
    Arena& arena = b.arena();
    arena.reset();
    SpeakerProbabilities out;
    out.n_speakers = config_.n_speakers;
    out.frame_sec = config_.frame_sec;
    const int64_t n_model = audio_->resampled_length(samples, n, sample_rate);
    const int64_t frames = n_model > 0 ? output_frames(mel_frames(n_model)) : 0;
    if (frames > 0) {
        const int64_t d = config_.enc.d_model;
        float* enc = arena.alloc_array<float>(static_cast<size_t>(frames * d));
        {
            ArenaScope scope(arena);
            int64_t got = 0;
            const float* audio = audio_->prepare(b, samples, n, sample_rate, &got);
            // process_signal's offline peak scaling, in float32 as torch computes it
            float peak = audio[0];
            for (int64_t i = 1; i < got; ++i) peak = std::max(peak, audio[i]);
            const float scale = 1.0f / (peak + kPeakEps);
            float* scaled = arena.alloc_array<float>(static_cast<size_t>(got));
            for (int64_t i = 0; i < got; ++i) scaled[i] = scale * audio[i];
            float* mel = arena.alloc_array<float>(static_cast<size_t>(log_mel_->n_frames(got) * config_.pre.n_mels));
            log_mel_->compute(b.team(), arena, scaled, got, mel);
            pre_encode(b.team(), arena, mel, mel_frames(got), enc);
        }
        progress.at(kFrontEndEnd);
        encode_layers(b.team(), arena, enc, frames, progress.sub(kFrontEndEnd, kLayersEnd));
        out.data.resize(static_cast<size_t>(frames * out.n_speakers));
        out.frames = frames;
        speaker_head(b.team(), arena, enc, frames, out.data.data());
    } else {
        audio_->prepare(b, samples, n, sample_rate, &out.frames);  // checks the samples all the same
        out.frames = 0;
    }
    arena.release_if_above(kArenaKeepBytes);
    progress.at(1.0);
    return out;
}

}  // namespace pk
