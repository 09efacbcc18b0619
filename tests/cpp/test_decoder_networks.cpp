// The decoders end to end on small random models stored as in-memory GGUF images: the
// prediction net and the joint against plain reference code, whole greedy TDT / RNN-T / CTC
// decodes against literal ports of NeMo's loops, bitwise identical results at 1-4 threads,
// and F16 / Q8_0 weights.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "gguf/gguf_reader.h"
#include "gguf_test_builder.h"
#include "isa_levels.h"
#include "kernels/f16.h"
#include "model/decoder/ctc_decoder.h"
#include "model/decoder/transducer_decoder.h"
#include "model/tensor_loader.h"

namespace {

using Vec = std::vector<float>;

struct Sizes {
    int V = 37;   // vocabulary without blank
    int H = 24;   // prediction net hidden
    int L = 2;    // LSTM layers
    int J = 20;   // joint hidden
    int d = 16;   // encoder d_model
    bool tdt = true;
    int max_symbols = 3;
};

enum class Storage { F32, F16, Q8_0 };

// A random model: the weights as floats (for the reference code) and as a GGUF image.
struct RandomModel {
    Sizes s;
    std::vector<int> durations;
    Vec embed;                          // [V+1, H]; the blank row is NOT zero on purpose
    std::vector<Vec> w_ih, w_hh, b_ih, b_hh;
    Vec we, be, wp, bp, w2, b2;         // joint
    Vec wc, bc;                         // CTC head [V+1, d]
    pk::ModelConfig cfg;
    std::vector<uint8_t> image;

    int outputs() const { return s.V + 1 + static_cast<int>(durations.size()); }

    RandomModel(Sizes sizes, uint32_t seed, pk::Arch arch, Storage joint_storage = Storage::F32,
                Storage lstm_storage = Storage::F32)
        : s(sizes) {
        std::mt19937 rng(seed);
        const auto rnd = [&](size_t n, float scale) {
            std::uniform_real_distribution<float> u(-scale, scale);
            Vec v(n);
            for (float& x : v) x = u(rng);
            return v;
        };
        if (s.tdt) durations = {0, 1, 2, 3, 4};
        const size_t V1 = static_cast<size_t>(s.V + 1), H = static_cast<size_t>(s.H);
        embed = rnd(V1 * H, 1.0f);
        for (int l = 0; l < s.L; ++l) {
            w_ih.push_back(rnd(4 * H * H, 1.0f / std::sqrt(float(H))));
            w_hh.push_back(rnd(4 * H * H, 1.0f / std::sqrt(float(H))));
            b_ih.push_back(rnd(4 * H, 0.5f));
            b_hh.push_back(rnd(4 * H, 0.5f));
        }
        const size_t J = static_cast<size_t>(s.J), d = static_cast<size_t>(s.d);
        we = rnd(J * d, 1.5f / std::sqrt(float(d)));
        be = rnd(J, 0.5f);
        wp = rnd(J * H, 1.5f / std::sqrt(float(H)));
        bp = rnd(J, 0.5f);
        w2 = rnd(static_cast<size_t>(outputs()) * J, 2.0f / std::sqrt(float(J)));
        b2 = rnd(static_cast<size_t>(outputs()), 0.5f);
        b2[static_cast<size_t>(s.V)] += 2.0f;  // make blanks common enough
        // Duration logits driven by the input rather than by their biases, so that every
        // duration (0 included) gets predicted.
        for (size_t o = V1; o < static_cast<size_t>(outputs()); ++o) {
            b2[o] = 0.0f;
            for (size_t j = 0; j < J; ++j) w2[o * J + j] *= 3.0f;
        }
        wc = rnd(V1 * d, 2.0f / std::sqrt(float(d)));
        bc = rnd(V1, 0.5f);
        bc[static_cast<size_t>(s.V)] += 1.0f;

        cfg.arch = arch;
        cfg.vocab_size = s.V;
        cfg.blank_id = s.V;
        cfg.enc.d_model = s.d;
        cfg.pred_hidden = s.H;
        cfg.pred_rnn_layers = s.L;
        cfg.joint_hidden = s.J;
        cfg.max_symbols = s.max_symbols;
        cfg.durations = durations;

        // The stored weights are what the engine reads; keep the reference on the same values.
        gguf_test::GgufBuilder b;
        const auto add = [&](const std::string& name, Vec& w, std::vector<uint64_t> ne, Storage st) {
            b.tensor(name, type_id(st), ne, encode(w, st));
        };
        const uint64_t h = H, v1 = V1;
        const std::string lstm = "decoder.prediction.dec_rnn.lstm.";
        if (arch != pk::Arch::Ctc) {
            add("decoder.prediction.embed.weight", embed, {h, v1}, Storage::F32);
            for (int l = 0; l < s.L; ++l) {
                const std::string n = std::to_string(l);
                add(lstm + "weight_ih_l" + n, w_ih[size_t(l)], {h, 4 * h}, lstm_storage);
                add(lstm + "weight_hh_l" + n, w_hh[size_t(l)], {h, 4 * h}, lstm_storage);
                add(lstm + "bias_ih_l" + n, b_ih[size_t(l)], {4 * h}, Storage::F32);
                add(lstm + "bias_hh_l" + n, b_hh[size_t(l)], {4 * h}, Storage::F32);
            }
            add("joint.enc.weight", we, {d, J}, joint_storage);
            add("joint.enc.bias", be, {J}, Storage::F32);
            add("joint.pred.weight", wp, {h, J}, joint_storage);
            add("joint.pred.bias", bp, {J}, Storage::F32);
            add("joint.joint_net.2.weight", w2, {J, uint64_t(outputs())}, Storage::F32);
            add("joint.joint_net.2.bias", b2, {uint64_t(outputs())}, Storage::F32);
        }
        const std::string ctc = arch == pk::Arch::Ctc ? "decoder.decoder_layers.0" : "ctc_decoder.decoder_layers.0";
        add(ctc + ".weight", wc, {1, d, v1}, Storage::F32);
        add(ctc + ".bias", bc, {v1}, Storage::F32);
        image = b.build();
    }

    static uint32_t type_id(Storage st) {
        return st == Storage::F32 ? gguf_test::kTypeF32 : st == Storage::F16 ? gguf_test::kTypeF16 : gguf_test::kTypeQ8_0;
    }

    // Encodes w in `st` and replaces w by the values the file then holds.
    static std::vector<uint8_t> encode(Vec& w, Storage st) {
        std::vector<uint8_t> out;
        if (st == Storage::F32) {
            out.resize(w.size() * 4);
            std::memcpy(out.data(), w.data(), out.size());
        } else if (st == Storage::F16) {
            for (float& x : w) {
                const uint16_t h = pk::kernels::f32_to_f16(x);
                x = pk::kernels::f16_to_f32(h);
                out.push_back(uint8_t(h & 0xFF));
                out.push_back(uint8_t(h >> 8));
            }
        } else {
            for (size_t b = 0; b < w.size() / 32; ++b) {
                float amax = 0;
                for (size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(w[32 * b + j]));
                const uint16_t dh = pk::kernels::f32_to_f16(amax / 127.0f);
                const float dd = pk::kernels::f16_to_f32(dh);
                out.push_back(uint8_t(dh & 0xFF));
                out.push_back(uint8_t(dh >> 8));
                for (size_t j = 0; j < 32; ++j) {
                    const int q = dd == 0 ? 0 : int(std::lround(w[32 * b + j] / dd));
                    out.push_back(uint8_t(int8_t(q)));
                    w[32 * b + j] = dd * float(q);
                }
            }
        }
        return out;
    }

    // ---- reference code, straight from the PyTorch definitions ------------------------------
    struct State {
        std::vector<Vec> h, c;
    };
    State zero_state() const {
        return {std::vector<Vec>(size_t(s.L), Vec(size_t(s.H), 0.f)), std::vector<Vec>(size_t(s.L), Vec(size_t(s.H), 0.f))};
    }
    static double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }
    // RNNTDecoder.predict: label < 0 is the zero start-of-sequence input.
    State lstm(int label, const State& in) const {
        const int H = s.H;
        State out = in;
        Vec x(size_t(H), 0.f);
        if (label >= 0) std::copy(embed.begin() + label * H, embed.begin() + (label + 1) * H, x.begin());
        for (int l = 0; l < s.L; ++l) {
            std::vector<double> g(size_t(4 * H));
            for (int r = 0; r < 4 * H; ++r) {
                double acc = double(b_ih[size_t(l)][size_t(r)]) + b_hh[size_t(l)][size_t(r)];
                for (int k = 0; k < H; ++k)
                    acc += double(w_ih[size_t(l)][size_t(r * H + k)]) * x[size_t(k)] +
                           double(w_hh[size_t(l)][size_t(r * H + k)]) * in.h[size_t(l)][size_t(k)];
                g[size_t(r)] = acc;
            }
            for (int j = 0; j < H; ++j) {
                const double c = sigm(g[size_t(H + j)]) * in.c[size_t(l)][size_t(j)] +
                                 sigm(g[size_t(j)]) * std::tanh(g[size_t(2 * H + j)]);
                out.c[size_t(l)][size_t(j)] = float(c);
                out.h[size_t(l)][size_t(j)] = float(sigm(g[size_t(3 * H + j)]) * std::tanh(c));
            }
            x = out.h[size_t(l)];
        }
        return out;
    }
    std::vector<double> joint(const float* f, const Vec& g) const {
        std::vector<double> hid(static_cast<size_t>(s.J));
        for (int j = 0; j < s.J; ++j) {
            double a = double(be[size_t(j)]) + bp[size_t(j)];
            for (int k = 0; k < s.d; ++k) a += double(we[size_t(j * s.d + k)]) * f[k];
            for (int k = 0; k < s.H; ++k) a += double(wp[size_t(j * s.H + k)]) * g[size_t(k)];
            hid[size_t(j)] = a > 0 ? a : 0;
        }
        std::vector<double> out(static_cast<size_t>(outputs()));
        for (int o = 0; o < outputs(); ++o) {
            double a = b2[size_t(o)];
            for (int j = 0; j < s.J; ++j) a += double(w2[size_t(o * s.J + j)]) * hid[size_t(j)];
            out[size_t(o)] = a;
        }
        return out;
    }
};

int argmax(const std::vector<double>& x, size_t begin, size_t end) {
    size_t best = begin;
    for (size_t i = begin + 1; i < end; ++i)
        if (x[i] > x[best]) best = i;
    return int(best - begin);
}

double confidence(const std::vector<double>& x, size_t n) {
    double m = x[0], sum = 0;
    for (size_t i = 1; i < n; ++i) m = std::max(m, x[i]);
    for (size_t i = 0; i < n; ++i) sum += std::exp(x[i] - m);
    return (double(n) / sum - 1.0) / (double(n) - 1.0);
}

struct Stats {
    int zero_duration_tokens = 0, capped_visits = 0, capped_with_jump = 0, blank_zero_steps = 0;
};

// GreedyTDTInfer._greedy_decode, line by line (state None -> SOS with a zero state).
std::vector<pk::TranscriptToken> reference_tdt(const RandomModel& m, const float* enc, int n, Stats* stats) {
    std::vector<pk::TranscriptToken> out;
    const size_t V1 = size_t(m.s.V + 1);
    int last_token = -1;
    RandomModel::State state = m.zero_state();
    int t = 0;
    while (t < n) {
        int symbols = 0;
        bool need_loop = true;
        while (need_loop && symbols < m.s.max_symbols) {
            const RandomModel::State next = m.lstm(last_token, state);
            const std::vector<double> logits = m.joint(enc + t * m.s.d, next.h.back());
            const int k = argmax(logits, 0, V1);
            const int skip = m.durations[size_t(argmax(logits, V1, logits.size()))];
            if (k != m.s.V) {
                out.push_back({k, t, skip, float(confidence(logits, V1))});
                state = next;
                last_token = k;
                if (skip == 0) ++stats->zero_duration_tokens;
            } else if (skip == 0) {
                ++stats->blank_zero_steps;
            }
            ++symbols;
            t += skip;
            need_loop = skip == 0;
        }
        if (symbols == m.s.max_symbols) {
            ++stats->capped_visits;
            if (!need_loop) ++stats->capped_with_jump;
            t += 1;
        }
    }
    return out;
}

// GreedyRNNTInfer._greedy_decode.
std::vector<pk::TranscriptToken> reference_rnnt(const RandomModel& m, const float* enc, int n, Stats* stats) {
    std::vector<pk::TranscriptToken> out;
    const size_t V1 = size_t(m.s.V + 1);
    int last_token = -1;
    RandomModel::State state = m.zero_state();
    for (int t = 0; t < n; ++t) {
        bool not_blank = true;
        int symbols = 0;
        while (not_blank && symbols < m.s.max_symbols) {
            const RandomModel::State next = m.lstm(last_token, state);
            const std::vector<double> logits = m.joint(enc + t * m.s.d, next.h.back());
            const int k = argmax(logits, 0, V1);
            if (k == m.s.V) {
                not_blank = false;
            } else {
                out.push_back({k, t, 1, float(confidence(logits, V1))});
                state = next;
                last_token = k;
            }
            ++symbols;
        }
        if (symbols == m.s.max_symbols && not_blank) ++stats->capped_visits;
    }
    return out;
}

Vec random_encoder(int T, int d, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0.f, 1.f);
    Vec e(size_t(T * d));
    for (float& x : e) x = n(rng);
    return e;
}

void expect_same_path(const std::vector<pk::TranscriptToken>& got, const std::vector<pk::TranscriptToken>& want,
                      float conf_tol) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].id, want[i].id) << "token " << i;
        EXPECT_EQ(got[i].frame, want[i].frame) << "token " << i;
        EXPECT_EQ(got[i].duration, want[i].duration) << "token " << i;
        EXPECT_NEAR(got[i].confidence, want[i].confidence, conf_tol) << "token " << i;
    }
}

void expect_bitwise_equal(const std::vector<pk::TranscriptToken>& a, const std::vector<pk::TranscriptToken>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].id, b[i].id);
        EXPECT_EQ(a[i].frame, b[i].frame);
        EXPECT_EQ(a[i].duration, b[i].duration);
        EXPECT_EQ(std::memcmp(&a[i].confidence, &b[i].confidence, sizeof(float)), 0) << "token " << i;
    }
}

struct Loaded {
    pk::GgufReader reader;
    pk::TensorLoader loader;
    explicit Loaded(const RandomModel& m)
        : reader(pk::GgufReader::from_buffer(m.image.data(), m.image.size(), "random.gguf")),
          loader(reader, isa_test::highest_level()) {}
};

TEST(PredictionNet, StepMatchesTheLstmReferenceAndSosIsAZeroInput) {
    const RandomModel m({}, 11, pk::Arch::HybridTdtCtc);
    Loaded f(m);
    pk::ThreadTeam team(1);
    pk::Arena arena;
    const pk::PredictionNet net = pk::PredictionNet::load(f.loader, m.cfg, team, arena);
    ASSERT_EQ(net.layers(), 2);
    const size_t n = size_t(net.state_size());
    Vec h(n, 0.f), c(n, 0.f), h2(n), c2(n);
    RandomModel::State ref = m.zero_state();
    // SOS (blank), then a few tokens, chaining states.
    for (int token : {m.s.V, 5, 0, m.s.V - 1, 5}) {
        net.step(team, arena, token, h.data(), c.data(), h2.data(), c2.data());
        ref = m.lstm(token == m.s.V ? -1 : token, ref);
        for (int l = 0; l < m.s.L; ++l)
            for (int j = 0; j < m.s.H; ++j) {
                EXPECT_NEAR(h2[size_t(l * m.s.H + j)], ref.h[size_t(l)][size_t(j)], 2e-6);
                EXPECT_NEAR(c2[size_t(l * m.s.H + j)], ref.c[size_t(l)][size_t(j)], 2e-6);
            }
        h = h2;
        c = c2;
    }
}

TEST(TransducerDecoder, GreedyTdtMatchesNeMoLoopOnARandomModel) {
    Stats stats;
    const RandomModel m({}, 159, pk::Arch::HybridTdtCtc);  // a seed that takes every branch
    Loaded f(m);
    pk::ThreadTeam team(1);
    pk::Arena arena;
    const pk::TransducerDecoder dec = pk::TransducerDecoder::load(f.loader, m.cfg, team, arena);
    EXPECT_TRUE(dec.is_tdt());
    const int T = 41, enc_len = 37;
    const Vec enc = random_encoder(T, m.s.d, 3);
    const auto want = reference_tdt(m, enc.data(), enc_len, &stats);
    const auto got = dec.decode(team, arena, enc.data(), T, enc_len);
    expect_same_path(got, want, 2e-5f);
    // The random model takes every branch of the search.
    EXPECT_GT(stats.zero_duration_tokens, 0);
    EXPECT_GT(stats.capped_visits, 0);
    EXPECT_GT(stats.capped_with_jump, 0);
    EXPECT_GT(stats.blank_zero_steps, 0);
    EXPECT_GT(got.size(), 10u);
    // Frames past enc_len are never read: poisoning them changes nothing.
    Vec poisoned = enc;
    for (size_t i = size_t(enc_len * m.s.d); i < poisoned.size(); ++i) poisoned[i] = 1e30f;
    expect_bitwise_equal(dec.decode(team, arena, poisoned.data(), T, enc_len), got);
}

TEST(TransducerDecoder, GreedyRnntMatchesNeMoLoopOnARandomModel) {
    Sizes s;
    s.tdt = false;
    s.max_symbols = 2;
    Stats stats;
    const RandomModel m(s, 5, pk::Arch::HybridRnntCtc);
    Loaded f(m);
    pk::ThreadTeam team(1);
    pk::Arena arena;
    const pk::TransducerDecoder dec = pk::TransducerDecoder::load(f.loader, m.cfg, team, arena);
    EXPECT_FALSE(dec.is_tdt());
    EXPECT_EQ(dec.timestamp_rule(), pk::TimestampRule::Rnnt);
    const int T = 30;
    const Vec enc = random_encoder(T, m.s.d, 4);
    const auto want = reference_rnnt(m, enc.data(), T, &stats);
    expect_same_path(dec.decode(team, arena, enc.data(), T, T), want, 2e-5f);
    EXPECT_GT(stats.capped_visits, 0);
    EXPECT_GT(want.size(), 10u);
}

TEST(TransducerDecoder, ResultsAreBitwiseIdenticalAtAnyThreadCount) {
    Sizes s;
    s.V = 300;
    s.H = 96;
    s.L = 1;
    s.J = 144;
    s.d = 80;
    s.max_symbols = 4;
    const RandomModel m(s, 21, pk::Arch::HybridTdtCtc);
    Loaded f(m);
    const int T = 48;
    const Vec enc = random_encoder(T, m.s.d, 9);
    std::vector<pk::TranscriptToken> first;
    for (int threads : {1, 2, 3, 4}) {
        pk::ThreadTeam team(threads);
        pk::Arena arena;
        // Loading with another team must not change the table either.
        const pk::TransducerDecoder dec = pk::TransducerDecoder::load(f.loader, m.cfg, team, arena);
        const auto got = dec.decode(team, arena, enc.data(), T, T);
        if (threads == 1) {
            first = got;
            ASSERT_GT(first.size(), 5u);
        } else {
            expect_bitwise_equal(got, first);
        }
    }
}

TEST(TransducerDecoder, ConcurrentRequestsShareOneDecoder) {
    // Several requests, each with its own team and arena, decode against one loaded decoder
    // at once (the serving case); run under TSan this also checks the decoder is read-only.
    const RandomModel m({}, 159, pk::Arch::HybridTdtCtc);
    Loaded f(m);
    pk::ThreadTeam load_team(1);
    pk::Arena load_arena;
    const pk::TransducerDecoder dec = pk::TransducerDecoder::load(f.loader, m.cfg, load_team, load_arena);
    const pk::CtcDecoder ctc = pk::CtcDecoder::load(f.loader, m.cfg);
    const int T = 41;
    const Vec enc = random_encoder(T, m.s.d, 3);
    const auto want = dec.decode(load_team, load_arena, enc.data(), T, T);
    const auto want_ctc = ctc.decode(load_team, load_arena, enc.data(), T, T);
    std::vector<std::vector<pk::TranscriptToken>> got(4), got_ctc(4);
    std::vector<std::thread> requests;
    for (size_t r = 0; r < got.size(); ++r)
        requests.emplace_back([&, r] {
            pk::ThreadTeam team(r % 2 == 0 ? 1 : 2);
            pk::Arena arena;
            for (int rep = 0; rep < 3; ++rep) {
                got[r] = dec.decode(team, arena, enc.data(), T, T);
                got_ctc[r] = ctc.decode(team, arena, enc.data(), T, T);
            }
        });
    for (std::thread& t : requests) t.join();
    for (size_t r = 0; r < got.size(); ++r) {
        expect_bitwise_equal(got[r], want);
        expect_bitwise_equal(got_ctc[r], want_ctc);
    }
}

TEST(TransducerDecoder, QuantisedWeightsDecodeCloseToTheirValues) {
    Sizes s;
    s.V = 40;
    s.H = 64;
    s.L = 1;
    s.J = 32;
    s.d = 64;
    for (Storage st : {Storage::F16, Storage::Q8_0}) {
        Stats stats;
        // joint.enc / joint.pred in st, the LSTM in F16; the reference uses the stored values.
        const RandomModel m(s, 13, pk::Arch::HybridTdtCtc, st, Storage::F16);
        Loaded f(m);
        pk::ThreadTeam team(2);
        pk::Arena arena;
        const pk::TransducerDecoder dec = pk::TransducerDecoder::load(f.loader, m.cfg, team, arena);
        const int T = 12;
        const Vec enc = random_encoder(T, m.s.d, 8);
        const auto want = reference_tdt(m, enc.data(), T, &stats);
        const auto got = dec.decode(team, arena, enc.data(), T, T);
        if (st == Storage::F16) {
            expect_same_path(got, want, 2e-5f);
        } else {
            // Q8_0 also quantises the activations: the path may differ at near ties, so
            // compare the first step only, loosely.
            ASSERT_FALSE(got.empty());
            ASSERT_FALSE(want.empty());
            EXPECT_EQ(got[0].id, want[0].id);
            EXPECT_NEAR(got[0].confidence, want[0].confidence, 2e-2);
        }
    }
}

TEST(TransducerDecoder, EmptyAndInvalidLengths) {
    const RandomModel m({}, 7, pk::Arch::Tdt);
    Loaded f(m);
    pk::ThreadTeam team(1);
    pk::Arena arena;
    const pk::TransducerDecoder dec = pk::TransducerDecoder::load(f.loader, m.cfg, team, arena);
    const Vec enc = random_encoder(3, m.s.d, 1);
    EXPECT_TRUE(dec.decode(team, arena, enc.data(), 3, 0).empty());
    EXPECT_THROW(dec.decode(team, arena, enc.data(), 3, 4), pk::InvalidArgument);
    EXPECT_THROW(dec.decode(team, arena, enc.data(), 3, -1), pk::InvalidArgument);
    EXPECT_EQ(arena.used_bytes(), 0u);  // everything given back
}

TEST(TransducerDecoder, WrongShapesAreModelErrors) {
    const RandomModel m({}, 7, pk::Arch::HybridTdtCtc);
    Loaded f(m);
    pk::ThreadTeam team(1);
    pk::Arena arena;
    pk::ModelConfig wrong = m.cfg;
    wrong.joint_hidden += 1;
    EXPECT_THROW(pk::TransducerDecoder::load(f.loader, wrong, team, arena), pk::ModelError);
    wrong = m.cfg;
    wrong.durations.push_back(8);  // joint_net.2 then has one output too few
    EXPECT_THROW(pk::TransducerDecoder::load(f.loader, wrong, team, arena), pk::ModelError);
    wrong = m.cfg;
    wrong.pred_rnn_layers = 3;
    EXPECT_THROW(pk::TransducerDecoder::load(f.loader, wrong, team, arena), pk::ModelError);
}

void check_ctc(pk::Arch arch) {
    const RandomModel m({}, 17, arch);
    Loaded f(m);
    pk::ThreadTeam team(2);
    pk::Arena arena;
    const pk::CtcDecoder dec = pk::CtcDecoder::load(f.loader, m.cfg);
    const int T = 60, enc_len = 55;
    const Vec enc = random_encoder(T, m.s.d, 2);
    // Reference: logits, argmax per frame, collapse.
    std::vector<pk::TranscriptToken> want;
    int prev = m.s.V;
    const size_t V1 = size_t(m.s.V + 1);
    for (int t = 0; t < enc_len; ++t) {
        std::vector<double> logits(V1);
        for (size_t o = 0; o < V1; ++o) {
            double a = m.bc[o];
            for (int k = 0; k < m.s.d; ++k) a += double(m.wc[o * size_t(m.s.d) + size_t(k)]) * enc[size_t(t * m.s.d + k)];
            logits[o] = a;
        }
        const int k = argmax(logits, 0, V1);
        const float conf = float(confidence(logits, V1));
        if (k != m.s.V && k != prev) {
            want.push_back({k, t, 1, conf});
        } else if (k != m.s.V) {
            want.back().duration += 1;
            want.back().confidence = std::min(want.back().confidence, conf);
        }
        prev = k;
    }
    const auto got = dec.decode(team, arena, enc.data(), T, enc_len);
    expect_same_path(got, want, 2e-5f);
    EXPECT_GT(got.size(), 5u);
}

TEST(CtcDecoder, HybridHeadMatchesReference) { check_ctc(pk::Arch::HybridTdtCtc); }
TEST(CtcDecoder, PureCtcHeadMatchesReference) { check_ctc(pk::Arch::Ctc); }

TEST(CtcDecoder, TransducerOnlyModelHasNoHead) {
    RandomModel m({}, 17, pk::Arch::HybridTdtCtc);
    m.cfg.arch = pk::Arch::Tdt;
    Loaded f(m);
    EXPECT_THROW(pk::CtcDecoder::load(f.loader, m.cfg), pk::ModelError);
}

}  // namespace
