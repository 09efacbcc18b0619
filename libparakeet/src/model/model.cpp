#include "model/model.h"

#include <cmath>
#include <sstream>

#include "common/errors.h"
#include "model/tensor_loader.h"

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

std::unique_ptr<LogMel> load_log_mel(const TensorLoader& t, const PreprocessorConfig& p) {
    const int64_t bins = p.n_fft / 2 + 1;
    const float* window = t.f32("preprocessor.featurizer.window", {p.win_length});
    const float* fb = t.f32("preprocessor.featurizer.fb", {1, p.n_mels, bins});
    return std::make_unique<LogMel>(log_mel_config(p), std::vector<float>(window, window + p.win_length),
                                    std::vector<float>(fb, fb + p.n_mels * bins));
}

constexpr int kMinSampleRate = 1000;
constexpr int kMaxSampleRate = 384000;

}  // namespace

Model::Model(std::string path, GgufReader gguf) : path_(std::move(path)), gguf_(std::move(gguf)) {}

std::unique_ptr<Model> Model::load(const std::string& path) {
    std::unique_ptr<Model> m(new Model(path, GgufReader::open(path)));
    m->config_ = read_model_config(m->gguf_);
    const TensorLoader tensors(m->gguf_);
    m->log_mel_ = load_log_mel(tensors, m->config_.pre);
    m->encoder_ = std::make_unique<FastConformerEncoder>(tensors, m->config_.enc);
    return m;
}

const Resampler& Model::resampler_for(int sample_rate) const {
    std::lock_guard<std::mutex> lock(resamplers_mu_);
    auto& r = resamplers_[sample_rate];
    if (!r) r = std::make_unique<Resampler>(sample_rate, config_.pre.sample_rate);
    return *r;
}

const float* Model::prepare_audio(Backend& b, const float* samples, int64_t n, int sample_rate,
                                  int64_t* n_out) const {
    if (n < 0) throw InvalidInput("the number of samples is negative (" + std::to_string(n) + ")");
    if (n > 0 && samples == nullptr) throw InvalidInput("the sample buffer is NULL");
    if (sample_rate < kMinSampleRate || sample_rate > kMaxSampleRate)
        throw InvalidInput("sample rate " + std::to_string(sample_rate) + " Hz is not supported (" +
                           std::to_string(kMinSampleRate) + " to " + std::to_string(kMaxSampleRate) + " Hz)");
    const double seconds = static_cast<double>(n) / sample_rate;
    if (seconds > kMaxAudioSeconds) {
        std::ostringstream m;
        m << "audio is " << seconds << " s long; the limit is " << kMaxAudioSeconds << " s";
        throw InvalidInput(m.str());
    }
    for (int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(samples[i]))
            throw InvalidInput("sample " + std::to_string(i) + " is not a finite number (NaN or Inf)");
    }
    if (sample_rate == config_.pre.sample_rate) {
        *n_out = n;
        return samples;
    }
    const Resampler& r = resampler_for(sample_rate);
    const int64_t m = r.output_length(n);
    float* out = b.arena().alloc_array<float>(static_cast<size_t>(m > 0 ? m : 1));
    r.process(b.team(), samples, n, out);
    *n_out = m;
    return out;
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

EncoderOutput Model::encode(Backend& b, const MelFeatures& mel,
                            const FastConformerEncoder::StageObserver& observe) const {
    EncoderOutput e;
    e.frames = FastConformerEncoder::output_frames(mel.valid);
    if (e.frames <= 0) return e;
    float* out = b.arena().alloc_array<float>(static_cast<size_t>(e.frames * config_.enc.d_model));
    encoder_->forward(b.team(), b.arena(), mel.data, mel.valid, out, observe);
    e.data = out;
    return e;
}

}  // namespace pk
