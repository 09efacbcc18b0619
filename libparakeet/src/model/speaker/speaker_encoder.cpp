#include "model/speaker/speaker_encoder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <utility>

#include "common/errors.h"
#include "common/sha256.h"
#include "model/frontend/resample.h"
#include "model/gguf_schema.h"
#include "model/model.h"
#include "model/model_kind.h"
#include "model/speaker/campplus.h"
#include "model/speaker/ecapa_tdnn.h"
#include "model/speaker/eres2net.h"
#include "model/speaker/voicedetect_schema.h"
#include "model/speaker/wespeaker_resnet.h"
#include "runtime/thread_budget.h"

namespace pk::speaker {

namespace {

namespace vd = schema::voicedetect;

// "sha256:<hex>" of the file's bytes, read in pieces.
std::string file_identity(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) throw ModelError(path + ": cannot open the file to hash it");
    Sha256 hash;
    std::vector<char> buf(1 << 20);
    size_t got;
    while ((got = std::fread(buf.data(), 1, buf.size(), f)) > 0) hash.update(buf.data(), got);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) throw ModelError(path + ": read error while hashing the file");
    return "sha256:" + digest_hex(hash.finish());
}

std::string string_or_empty(const GgufReader& g, const char* key) { return g.has_key(key) ? g.get_string(key) : ""; }
uint32_t u32_or(const GgufReader& g, const char* key, uint32_t fallback) {
    return g.has_key(key) ? g.get_u32(key) : fallback;
}
float f32_or(const GgufReader& g, const char* key, float fallback) { return g.has_key(key) ? g.get_f32(key) : fallback; }
bool bool_or(const GgufReader& g, const char* key, bool fallback) { return g.has_key(key) ? g.get_bool(key) : fallback; }

// The front end voicedetect.fbank.* describes; the variants no encoder was trained with are refused.
KaldiFbankConfig read_fbank(const GgufReader& g) {
    KaldiFbankConfig c;
    c.sample_rate = static_cast<int>(u32_or(g, vd::kFbankSampleRate, 16000));
    c.n_mels = static_cast<int>(u32_or(g, vd::kFbankNMels, 80));
    c.win_length = static_cast<int>(u32_or(g, vd::kFbankWinLength, 400));
    c.hop_length = static_cast<int>(u32_or(g, vd::kFbankHopLength, 160));
    c.preemph = f32_or(g, vd::kFbankPreemph, 0.97f);
    c.low_freq = f32_or(g, vd::kFbankLowFreq, 20.0f);
    c.high_freq = f32_or(g, vd::kFbankHighFreq, 0.0f);
    c.cmn = bool_or(g, vd::kFbankCmn, true);
    const std::string window = g.has_key(vd::kFbankWindow) ? g.get_string(vd::kFbankWindow) : "povey";
    if (window != "povey") throw Unsupported(g.name() + ": fbank window '" + window + "' is not supported (only povey)");
    if (bool_or(g, vd::kFbankUseEnergy, false))
        throw Unsupported(g.name() + ": fbank use_energy is not supported");
    if (c.win_length < 2 || c.win_length > (1 << 16) || c.hop_length < 1 || c.sample_rate < 1)
        throw ModelError(g.name() + ": voicedetect.fbank sizes out of range (win_length " +
                         std::to_string(c.win_length) + ", hop_length " + std::to_string(c.hop_length) +
                         ", sample_rate " + std::to_string(c.sample_rate) + ")");
    int n_fft = 1;
    while (n_fft < c.win_length) n_fft *= 2;
    if (u32_or(g, vd::kFbankNFft, n_fft) != static_cast<uint32_t>(n_fft))
        throw Unsupported(g.name() + ": fbank n_fft must be the power of two above win_length (" +
                          std::to_string(n_fft) + ")");
    return c;
}

template <class Net>
std::unique_ptr<SpeakerNetwork> adapt(Net net) {
    return std::make_unique<NetworkOf<Net>>(std::move(net));
}

// The networks by voicedetect.arch: how each loads for the front end's `n_mels` (ECAPA takes its
// mel count from its first convolution, which the caller checks against the front end's; the
// others are built for the front end's), and the tensor that makes its embedding, for messages.
struct Arch {
    const char* name;
    std::unique_ptr<SpeakerNetwork> (*load)(const GgufReader& g, const TensorLoader& t, int n_mels);
    std::string (*output_name)(const GgufReader& g);
};

const Arch kArchs[] = {
    {vd::kArchEcapa, [](const GgufReader& g, const TensorLoader& t, int) { return adapt(EcapaTdnn::load(g, t)); },
     [](const GgufReader&) { return std::string("fc.conv.weight"); }},
    {vd::kArchResnet34,
     [](const GgufReader& g, const TensorLoader& t, int n_mels) { return adapt(WespeakerResnet::load(g, t, n_mels)); },
     [](const GgufReader& g) { return string_or_empty(g, vd::kResnetSegWeight); }},
    {vd::kArchEres2net,
     [](const GgufReader& g, const TensorLoader& t, int n_mels) { return adapt(ERes2Net::load(g, t, n_mels)); },
     [](const GgufReader& g) { return string_or_empty(g, vd::kEres2netSegWeight); }},
    {vd::kArchCampplus,
     [](const GgufReader& g, const TensorLoader& t, int n_mels) { return adapt(CamPPlus::load(g, t, n_mels)); },
     [](const GgufReader& g) {  // the dense layer: the manifest's last convolution
         const std::vector<std::string> convs = g.get_string_array(vd::kCampplusConvWeight);
         return convs.back();
     }},
};

// The entry of `arch`; throws Unsupported naming those there are.
const Arch& find_arch(const GgufReader& g, const std::string& arch) {
    std::string known;
    for (const Arch& a : kArchs) {
        if (a.name == arch) return a;
        known += (known.empty() ? "" : ", ") + std::string(a.name);
    }
    throw Unsupported(g.name() + ": speaker encoder architecture '" + arch + "' is not supported (only " + known +
                      ")");
}

}  // namespace

std::unique_ptr<SpeakerEncoder> SpeakerEncoder::load(const std::string& path, const LoadOptions& options) {
    const std::string identity = file_identity(path);
    std::unique_ptr<SpeakerEncoder> e = load(GgufReader::open(path), identity, options);
    // The hash must describe the weights that were read, so a file rewritten meanwhile is refused.
    if (file_identity(path) != identity) throw ModelError(path + ": speaker model changed during load");
    return e;
}

std::unique_ptr<SpeakerEncoder> SpeakerEncoder::load(GgufReader gguf, std::string identity, const LoadOptions& options) {
    const IsaLevel isa = checked_isa_level(options.isa);
    std::unique_ptr<SpeakerEncoder> e(new SpeakerEncoder());
    e->identity_ = std::move(identity);
    e->gguf_ = std::make_unique<GgufReader>(std::move(gguf));
    const GgufReader& g = *e->gguf_;
    if (detect_model_kind(g) != ModelKind::Speaker) {
        const ModelKind kind = detect_model_kind(g);
        throw ModelError(g.name() + ": not a speaker model (it holds " +
                         (kind == ModelKind::None ? std::string("no known model")
                                                  : std::string("a ") + model_kind_name(kind) + " model") + ")");
    }
    const std::string arch = string_or_empty(g, vd::kArch);
    const uint32_t dim = u32_or(g, vd::kEmbeddingDim, 0);
    if (dim == 0) throw ModelError("the speaker model has no speaker embedding (an analysis model?)");
    const Arch& network = find_arch(g, arch);
    e->family_ = "voicedetect:" + arch + ":" + string_or_empty(g, schema::kGeneralName) + ":" + std::to_string(dim);
    e->l2_normalize_ = bool_or(g, vd::kL2Normalize, true);

    // A quantised file (voice-detect.cpp's q8_0 keeps the kernel-3/5 convolutions F32) also
    // quantises its other F32 convolutions whose rows are whole Q8_0 blocks at load, as a
    // quantised ASR model does (LoadOptions::q8_all).
    WeightConversions conversions;
    const auto quantised = [](const GgufTensor& w) { return ggml_type_is_quantised(w.type); };
    conversions.q8_at_load = options.q8_all && std::any_of(g.tensors().begin(), g.tensors().end(), quantised);
    const TensorLoader t(g, isa, conversions);
    e->kernels_ = &t.kernels();
    const KaldiFbankConfig fbank = read_fbank(g);
    e->net_ = network.load(g, t, fbank.n_mels);
    if (e->net_->embedding_dim() != dim)
        t.fail(network.output_name(g) + " gives " + std::to_string(e->net_->embedding_dim()) + "-value embeddings, " +
               vd::kEmbeddingDim + " says " + std::to_string(dim));
    // The front end is built once its size is known to fit the network (a file's n_mels sizes
    // the filter bank).
    if (e->net_->n_mels() != fbank.n_mels)
        t.fail("the network takes " + std::to_string(e->net_->n_mels()) + " mel bins, the front end gives " +
               std::to_string(fbank.n_mels));
    e->fbank_ = std::make_unique<KaldiFbank>(fbank);
    e->dim_ = static_cast<int>(dim);
    e->backend_ = std::make_unique<Backend>(options.threads > 0 ? options.threads : default_thread_count());
    return e;
}

std::vector<float> SpeakerEncoder::features(const float* samples, int64_t n) const {
    std::lock_guard<std::mutex> lock(backend_->mutex());
    std::vector<float> feats(static_cast<size_t>(fbank_->n_frames(n) * fbank_->config().n_mels));
    fbank_->compute(backend_->team(), samples, n, feats.data());
    return feats;
}

std::vector<float> SpeakerEncoder::embed(const float* samples, int64_t n, int sample_rate) const {
    if (sample_rate <= 0) throw InvalidAudio("invalid sample rate");
    if (samples == nullptr || n <= 0) throw InvalidAudio("no audio");
    std::lock_guard<std::mutex> lock(backend_->mutex());
    ThreadTeam& team = backend_->team();
    Arena& arena = backend_->arena();
    arena.reset();
    std::vector<float> resampled;
    if (sample_rate != this->sample_rate()) {
        const Resampler r(sample_rate, this->sample_rate());
        resampled.resize(static_cast<size_t>(r.output_length(n)));
        r.process(team, samples, n, resampled.data());
        samples = resampled.data();
        n = static_cast<int64_t>(resampled.size());
    }
    const int64_t T = fbank_->n_frames(n);
    if (T < net_->min_frames())
        throw InvalidAudio("too little audio for the speaker encoder: " + std::to_string(T) +
                           " feature frames, at least " + std::to_string(net_->min_frames()) + " needed");
    std::vector<float> feats(static_cast<size_t>(T * fbank_->config().n_mels));
    fbank_->compute(team, samples, n, feats.data());
    std::vector<float> out(static_cast<size_t>(dim_));
    net_->forward(team, arena, feats.data(), T, out.data());
    double norm2 = 0;
    for (float v : out) norm2 += static_cast<double>(v) * v;
    if (!std::isfinite(norm2) || norm2 == 0) throw InvalidAudio("speaker embedding is all zero or not finite");
    if (l2_normalize_) {
        const double inv = 1.0 / std::sqrt(norm2);
        for (float& v : out) v = static_cast<float>(v * inv);
    }
    return out;
}

}  // namespace pk::speaker
