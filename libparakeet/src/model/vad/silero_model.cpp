#include "model/vad/silero_model.h"

#include <cmath>
#include <cstring>

#include "common/errors.h"
#include "kernels/f16.h"
#include "kernels/ops_dot.h"
#include "model/gguf_schema.h"
#include "model/model.h"
#include "model/model_kind.h"
#include "model/tensor_shape.h"
#include "model/vad/silero_schema.h"

namespace pk {

namespace {

namespace s = schema::silero;

inline float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

// A tensor's values as floats (F32 as stored, F16 widened), checked against the PyTorch shape.
std::vector<float> read_tensor(const GgufReader& g, const std::string& name, std::vector<int64_t> torch_shape) {
    const GgufTensor* t = g.find_tensor(name);
    if (t == nullptr) throw g.error("missing tensor " + name + " (not a Silero VAD v6 file?)");
    if (!same_shape_ignoring_ones(*t, torch_shape))
        throw g.error("tensor " + name + " has shape " + torch_shape_string(*t) + ", expected " +
                      torch_shape_string(torch_shape));
    std::vector<float> out(static_cast<size_t>(t->n_elements));
    if (t->type == GgmlType::F32) {
        std::memcpy(out.data(), t->data, out.size() * sizeof(float));
    } else if (t->type == GgmlType::F16) {
        for (size_t i = 0; i < out.size(); ++i) {
            uint16_t h;
            std::memcpy(&h, t->data + 2 * i, 2);
            out[i] = kernels::f16_to_f32(h);
        }
    } else {
        throw g.error("tensor " + name + " is stored as " + ggml_type_name(static_cast<uint32_t>(t->type)) +
                      "; a Silero VAD file holds F32 or F16 tensors");
    }
    return out;
}

// Whether basis rows c and bins + c are window · cos and ± window · sin of 2πck/n (the window
// being row 0, where cos is 1); if so, the window, for the FFT path.
std::vector<float> dft_window(const std::vector<float>& basis, int bins, int n) {
    const double kTol = 1e-6;
    std::vector<float> w(basis.begin(), basis.begin() + n);
    for (int sign : {1, -1}) {
        bool ok = true;
        for (int c = 0; c < bins && ok; ++c)
            for (int k = 0; k < n && ok; ++k) {
                const double a = 2.0 * 3.14159265358979323846 * static_cast<double>((static_cast<int64_t>(c) * k) % n) / n;
                ok = std::fabs(basis[static_cast<size_t>(c) * n + k] - w[k] * std::cos(a)) <= kTol &&
                     std::fabs(basis[static_cast<size_t>(c + bins) * n + k] - sign * w[k] * std::sin(a)) <= kTol;
            }
        if (ok) return w;
    }
    return {};
}

void expect_int(const GgufReader& g, const std::string& key, int64_t want) {
    const int64_t got = g.get_i64(key);
    if (got != want)
        throw g.error("key " + key + " = " + std::to_string(got) + ", expected " + std::to_string(want) +
                      " (Silero VAD v6)");
}

void expect_ints(const GgufReader& g, const std::string& key, const std::vector<int64_t>& want) {
    if (g.get_i64_array(key) != want) throw g.error("key " + key + " differs from Silero VAD v6's");
}

SileroBranch load_branch(const GgufReader& g, int rate, const char* prefix, int chunk, int context, int n_fft) {
    SileroBranch b;
    b.sample_rate = rate;
    b.chunk = chunk;
    b.context = context;
    b.n_fft = n_fft;
    b.hop = n_fft / 2;
    b.reflect_pad = context;
    b.bins = n_fft / 2 + 1;
    const std::string k = "silero_vad." + std::to_string(rate) + ".";
    expect_int(g, k + s::kChunkSamples, chunk);
    expect_int(g, k + s::kContextSamples, context);
    expect_int(g, k + s::kStftNFft, n_fft);
    expect_int(g, k + s::kStftHop, b.hop);
    expect_int(g, k + s::kStftRightReflectPad, b.reflect_pad);

    const std::string p = prefix;
    b.stft_basis = read_tensor(g, p + s::kStftBasis, {2 * b.bins, 1, n_fft});
    b.window = dft_window(b.stft_basis, b.bins, n_fft);
    if (!b.window.empty()) b.fft = std::make_shared<kernels::RealFft>(n_fft);
    const int channels[5] = {b.bins, 128, 64, 64, 128};
    const int strides[4] = {1, 2, 2, 1};
    for (int i = 0; i < 4; ++i) {
        SileroBranch::Conv& c = b.encoder[i];
        c.in = channels[i];
        c.out = channels[i + 1];
        c.stride = strides[i];
        const std::string name = p + "encoder." + std::to_string(i) + ".reparam_conv.";
        const std::vector<float> w = read_tensor(g, name + "weight", {c.out, c.in, SileroVad::kKernel});
        c.bias = read_tensor(g, name + "bias", {c.out});
        // [out][in][k] → [out][k][in], so that one output is one dot product with the
        // kernel-wide window of input columns laid out tap by tap.
        c.weight.resize(w.size());
        for (int o = 0; o < c.out; ++o)
            for (int ci = 0; ci < c.in; ++ci)
                for (int t = 0; t < SileroVad::kKernel; ++t)
                    c.weight[(static_cast<size_t>(o) * SileroVad::kKernel + t) * c.in + ci] =
                        w[(static_cast<size_t>(o) * c.in + ci) * SileroVad::kKernel + t];
    }
    const int H = SileroVad::kHidden;
    const std::vector<float> wih = read_tensor(g, p + s::kLstmWeightIh, {4 * H, H});
    const std::vector<float> whh = read_tensor(g, p + s::kLstmWeightHh, {4 * H, H});
    const std::vector<float> bih = read_tensor(g, p + s::kLstmBiasIh, {4 * H});
    const std::vector<float> bhh = read_tensor(g, p + s::kLstmBiasHh, {4 * H});
    b.lstm_weight.resize(static_cast<size_t>(4 * H) * 2 * H);
    b.lstm_bias.resize(4 * H);
    for (int r = 0; r < 4 * H; ++r) {
        std::memcpy(&b.lstm_weight[static_cast<size_t>(r) * 2 * H], &wih[static_cast<size_t>(r) * H], H * sizeof(float));
        std::memcpy(&b.lstm_weight[static_cast<size_t>(r) * 2 * H + H], &whh[static_cast<size_t>(r) * H],
                    H * sizeof(float));
        b.lstm_bias[r] = bih[r] + bhh[r];
    }
    b.out_weight = read_tensor(g, p + s::kOutWeight, {1, H, 1});
    b.out_bias = read_tensor(g, p + s::kOutBias, {1})[0];
    return b;
}

}  // namespace

std::unique_ptr<SileroVad> SileroVad::load(const std::string& path, std::optional<IsaLevel> isa) {
    const GgufReader gguf = GgufReader::open(path);
    auto m = load(gguf, isa);
    m->path_ = path;
    return m;
}

std::unique_ptr<SileroVad> SileroVad::load(const GgufReader& g, std::optional<IsaLevel> isa) {
    const ModelKind kind = detect_model_kind(g);
    if (kind != ModelKind::Vad) {
        if (kind == ModelKind::None) throw g.error("not a Silero VAD file (general.architecture is not 'silero_vad')");
        throw Unsupported(g.name() + ": this file holds a " + model_kind_name(kind) +
                          " model, not a Silero VAD model");
    }
    expect_int(g, s::kEncoderNLayers, 4);
    expect_int(g, s::kEncoderKernel, kKernel);
    expect_int(g, s::kLstmHidden, kHidden);
    expect_ints(g, s::kEncoderStrides, {1, 2, 2, 1});
    expect_ints(g, s::kEncoderChannels, {128, 64, 64, 128});
    expect_ints(g, s::kSampleRates, {8000, 16000});
    auto m = std::unique_ptr<SileroVad>(new SileroVad());
    m->path_ = g.name();
    m->file_bytes_ = g.file_size();
    m->kernels_ = &kernels::kernel_table(checked_isa_level(isa));
    m->b16_ = load_branch(g, 16000, s::kPrefix16k, 512, 64, 256);
    m->b8_ = load_branch(g, 8000, s::kPrefix8k, 256, 32, 128);
    return m;
}

const SileroBranch* SileroVad::branch(int sample_rate) const {
    if (sample_rate == 16000) return &b16_;
    if (sample_rate == 8000) return &b8_;
    return nullptr;
}

SileroState SileroVad::initial_state(const SileroBranch& b) const {
    SileroState st;
    st.h.assign(kHidden, 0.f);
    st.c.assign(kHidden, 0.f);
    st.context.assign(b.context, 0.f);
    return st;
}

float SileroVad::step(const SileroBranch& b, SileroState& st, const float* chunk) const {
    float f[kHidden];
    features(b, st.context.data(), chunk, f);
    // the next chunk's context: this input's last b.context samples
    std::memmove(st.context.data(), chunk + b.chunk - b.context, b.context * sizeof(float));
    return decode(b, st, f);
}

void SileroVad::features(const SileroBranch& b, const float* context, const float* chunk, float* out) const {
    const kernels::KernelTable& kt = *kernels_;
    auto dot = [&kt](const float* a, const float* v, int n) { return kernels::dot(kt, a, v, n); };
    // Input: context | chunk, then reflected on the right (x[n-2], x[n-3], ...).
    const int n = b.context + b.chunk;
    float x[640];
    std::memcpy(x, context, b.context * sizeof(float));
    std::memcpy(x + b.context, chunk, b.chunk * sizeof(float));
    for (int j = 0; j < b.reflect_pad; ++j) x[n + j] = x[n - 2 - j];

    // STFT magnitude, [bins][frames] (channel-major, as the encoder reads it).
    const int frames = (n + b.reflect_pad - b.n_fft) / b.hop + 1;  // 4
    float cur[129 * 4], next[128 * 4];
    if (b.fft) {
        float frame[256], spectrum[258];
        for (int t = 0; t < frames; ++t) {
            for (int k = 0; k < b.n_fft; ++k) frame[k] = b.window[k] * x[t * b.hop + k];
            b.fft->forward(kt, frame, spectrum);
            for (int c = 0; c < b.bins; ++c) {
                const float re = spectrum[2 * c], im = spectrum[2 * c + 1];
                cur[c * frames + t] = std::sqrt(re * re + im * im);
            }
        }
    }
    for (int c = 0; c < b.bins && !b.fft; ++c)
        for (int t = 0; t < frames; ++t) {
            const float re = dot(&b.stft_basis[static_cast<size_t>(c) * b.n_fft], x + t * b.hop, b.n_fft);
            const float im = dot(&b.stft_basis[static_cast<size_t>(c + b.bins) * b.n_fft], x + t * b.hop, b.n_fft);
            cur[c * frames + t] = std::sqrt(re * re + im * im);
        }

    // Encoder: each output is a dot product of the repacked weight row with the window of
    // kKernel input columns (zero outside, padding 1), gathered tap by tap.
    int T = frames;
    float window[kKernel * 129];
    for (const SileroBranch::Conv& conv : b.encoder) {
        const int T_out = (T + 2 - kKernel) / conv.stride + 1;
        for (int t = 0; t < T_out; ++t) {
            for (int k = 0; k < kKernel; ++k) {
                const int ti = t * conv.stride + k - 1;
                for (int ci = 0; ci < conv.in; ++ci)
                    window[k * conv.in + ci] = (ti >= 0 && ti < T) ? cur[ci * T + ti] : 0.f;
            }
            for (int o = 0; o < conv.out; ++o) {
                const float v = conv.bias[o] + dot(&conv.weight[static_cast<size_t>(o) * kKernel * conv.in], window,
                                                   kKernel * conv.in);
                next[o * T_out + t] = v > 0.f ? v : 0.f;
            }
        }
        T = T_out;
        std::memcpy(cur, next, static_cast<size_t>(conv.out) * T * sizeof(float));
    }

    for (int i = 0; i < kHidden; ++i) out[i] = cur[i * T + (T - 1)];  // the one remaining frame
}

float SileroVad::decode(const SileroBranch& b, SileroState& st, const float* features) const {
    const kernels::KernelTable& kt = *kernels_;
    auto dot = [&kt](const float* a, const float* v, int n) { return kernels::dot(kt, a, v, n); };
    // LSTM cell (PyTorch gate order i, f, g, o).
    const int H = kHidden;
    float in[2 * kHidden], gates[4 * kHidden];
    std::memcpy(in, features, H * sizeof(float));
    std::memcpy(in + H, st.h.data(), H * sizeof(float));
    for (int r = 0; r < 4 * H; ++r) gates[r] = b.lstm_bias[r] + dot(&b.lstm_weight[static_cast<size_t>(r) * 2 * H], in, 2 * H);
    float z = b.out_bias;
    for (int i = 0; i < H; ++i) {
        const float c = sigmoid(gates[H + i]) * st.c[i] + sigmoid(gates[i]) * std::tanh(gates[2 * H + i]);
        const float h = sigmoid(gates[3 * H + i]) * std::tanh(c);
        st.c[i] = c;
        st.h[i] = h;
    }
    for (int i = 0; i < H; ++i) z += b.out_weight[i] * (st.h[i] > 0.f ? st.h[i] : 0.f);
    return sigmoid(z);
}

}  // namespace pk
