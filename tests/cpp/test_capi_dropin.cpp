// parakeet.cpp's offline calls (parakeet_capi.h, "parakeet.cpp's offline calls") on the NeMo
// fixtures: the CTC log-probabilities equal NeMo's ctc_logprobs; batches equal single calls,
// with and without a pool; the _lang variants ignore the language (models without prompts;
// test_capi_languages has one with); the edge cases where
// parakeet.cpp crashes (no clips, NULL arrays) are errors or empty results; shutdown is safe
// while contexts live; the legacy one-shot API works.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "capi_test_support.h"
#include "gguf/gguf_reader.h"
#include "model/model.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

using capi_test::Ctx;
using capi_test::load;
using capi_test::take;

std::vector<float> clip(const char* name) {
    return pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/" + name, 0).samples;
}

// The CTC log-softmax matrix against NeMo's ctc_logprobs, for every fixture clip of a model with
// a CTC head (digital silence excepted: NeMo is not the reference there, see test_nemo_parity).
// From NeMo's own encoder output, our head and log-softmax are within 1e-4 absolute. End to end
// the encoder's float differences (test_nemo_parity: ~5e-6 of its max |value|) pass through the
// random head, whose logits reach ±130 here (a trained model's are a fraction of that), so the
// end-to-end bound is relative to the matrix's max |value|.
constexpr double kHeadAbsBound = 1e-4;
constexpr double kEndToEndRelBound = 1e-5;

double max_abs_diff(const float* a, const std::vector<float>& b) {
    double worst = 0.0;
    for (size_t i = 0; i < b.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
    return worst;
}

TEST(CapiDropin, CtcLogProbsEqualNeMos) {
    int checked = 0;
    for (const auto& f : nemo_fixtures::all()) {
        const pk::GgufReader ref = pk::GgufReader::open(f.ref_path);
        const std::vector<float> want = nemo_fixtures::tensor(ref, "ctc_logprobs");
        const std::vector<float> enc = nemo_fixtures::tensor(ref, "enc");
        const std::vector<float> samples = nemo_fixtures::clip_samples(ref);
        if (want.empty() || std::all_of(samples.begin(), samples.end(), [](float v) { return v == 0.f; })) continue;
        SCOPED_TRACE(f.ref_path);
        const int V1 = static_cast<int>(ref.get_i64("ref.vocab_size")) + 1;
        const int64_t T = static_cast<int64_t>(want.size()) / V1;

        // The head alone, on NeMo's encoder output.
        const auto model = pk::Model::load(f.model_dir + "/model.gguf");
        ASSERT_EQ(static_cast<int64_t>(enc.size()), T * model->config().enc.d_model);
        pk::Backend b(1);
        b.arena().reset();
        std::vector<float> head(want.size());
        model->ctc()->log_probs(b.team(), b.arena(), enc.data(), T, head.data());
        EXPECT_LE(max_abs_diff(head.data(), want), kHeadAbsBound);

        // End to end through the C ABI.
        const Ctx ctx = load(f.model_dir);
        float* got = nullptr;
        int got_T = -1, got_V1 = -1;
        ASSERT_EQ(parakeet_capi_transcribe_pcm_logits(ctx.get(), samples.data(), static_cast<int>(samples.size()),
                                                      16000, &got, &got_T, &got_V1),
                  0)
            << parakeet_capi_thread_last_error();
        ASSERT_EQ(got_T, T);
        ASSERT_EQ(got_V1, V1);
        double scale = 0.0;
        for (float v : want) scale = std::max(scale, std::fabs(double(v)));
        EXPECT_LE(max_abs_diff(got, want) / scale, kEndToEndRelBound);
        // Rows are log-probabilities: they sum to 1 in exp.
        for (int64_t t = 0; t < T; t += std::max<int64_t>(1, T / 7)) {
            double sum = 0.0;
            for (int v = 0; v < V1; ++v) sum += std::exp(double(got[size_t(t) * V1 + v]));
            EXPECT_NEAR(sum, 1.0, 1e-5);
        }
        parakeet_capi_free_logits(got);
        ++checked;
    }
    EXPECT_GE(checked, 12);
}

TEST(CapiDropin, LogitsErrors) {
    const Ctx rnnt = load(nemo_fixtures::data_dir() + "/nemo/rnnt");
    const std::vector<float> s = clip("short_1s_16k.wav");
    float* out = reinterpret_cast<float*>(&out);  // must be overwritten with NULL
    int T = 5, V1 = 5;
    EXPECT_NE(parakeet_capi_transcribe_pcm_logits(rnnt.get(), s.data(), static_cast<int>(s.size()), 16000, &out, &T,
                                                  &V1),
              0);
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(T, 0);
    EXPECT_EQ(V1, 0);
    EXPECT_NE(std::string(parakeet_capi_last_error(rnnt.get())).find("CTC"), std::string::npos);
    EXPECT_NE(parakeet_capi_transcribe_pcm_logits(nullptr, s.data(), 10, 16000, &out, &T, &V1), 0);
    EXPECT_NE(parakeet_capi_transcribe_pcm_logits(rnnt.get(), s.data(), 10, 16000, nullptr, &T, &V1), 0);
    parakeet_capi_free_logits(nullptr);
}

TEST(CapiDropin, BatchesEqualSingleCallsWithAndWithoutAPool) {
    const Ctx ctx = load(nemo_fixtures::data_dir() + "/nemo/hybrid_tdt_ctc");
    const std::vector<std::vector<float>> clips = {clip("speech_16k.wav"), clip("short_1s_16k.wav"), {},
                                                   clip("silence_2s_16k.wav"), clip("short_0p1s_16k.wav")};
    std::vector<const float*> ptrs;
    std::vector<int> lens;
    std::vector<float> concat;
    for (const auto& c : clips) {
        ptrs.push_back(c.data());
        lens.push_back(static_cast<int>(c.size()));
        concat.insert(concat.end(), c.begin(), c.end());
    }
    const int n = static_cast<int>(clips.size());
    for (int backends : {1, 3}) {
        ASSERT_EQ(parakeet_capi_set_concurrency(ctx.get(), backends, 1), backends);
        for (int decoder : {0, 1, 2}) {
            std::string array = "[";
            std::vector<std::string> texts;
            for (int i = 0; i < n; ++i) {
                texts.push_back(take(parakeet_capi_transcribe_pcm(ctx.get(), ptrs[i], lens[i], 16000, decoder)));
                array += (i ? "," : "") + take(parakeet_capi_transcribe_pcm_json(ctx.get(), ptrs[i], lens[i], 16000,
                                                                                 decoder));
            }
            array += "]";
            std::vector<char*> out(clips.size(), nullptr);
            ASSERT_EQ(parakeet_capi_transcribe_pcm_batch(ctx.get(), ptrs.data(), lens.data(), n, 16000, decoder,
                                                         out.data()),
                      0);
            for (int i = 0; i < n; ++i) EXPECT_EQ(take(out[i]), texts[i]) << i;
            ASSERT_EQ(parakeet_capi_transcribe_pcm_batch_lang(ctx.get(), ptrs.data(), lens.data(), n, 16000, decoder,
                                                              "de", out.data()),
                      0);
            for (int i = 0; i < n; ++i) EXPECT_EQ(take(out[i]), texts[i]) << i;
            EXPECT_EQ(take(parakeet_capi_transcribe_pcm_batch_json(ctx.get(), concat.data(), lens.data(), n, 16000,
                                                                   decoder)),
                      array);
            EXPECT_EQ(take(parakeet_capi_transcribe_pcm_batch_json_lang(ctx.get(), concat.data(), lens.data(), n,
                                                                        16000, decoder, nullptr)),
                      array);
        }
    }
    parakeet_capi_set_concurrency(ctx.get(), 1, 0);
}

TEST(CapiDropin, BatchEdgeCasesAreErrorsOrEmpty) {
    const Ctx ctx = load(nemo_fixtures::data_dir() + "/nemo/hybrid_tdt_ctc");
    EXPECT_EQ(take(parakeet_capi_transcribe_pcm_batch_json(ctx.get(), nullptr, nullptr, 0, 16000, 0)), "[]");
    EXPECT_EQ(parakeet_capi_transcribe_pcm_batch(ctx.get(), nullptr, nullptr, 0, 16000, 0, nullptr), 0);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_batch_json(ctx.get(), nullptr, nullptr, -1, 16000, 0), nullptr);
    EXPECT_NE(std::string(parakeet_capi_last_error(ctx.get())).find("negative"), std::string::npos);
    const int lens[2] = {100, -5};
    std::vector<float> s(100, 0.f);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_batch_json(ctx.get(), s.data(), lens, 2, 16000, 0), nullptr);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_batch_json(ctx.get(), nullptr, lens, 1, 16000, 0), nullptr);
    // A failing clip fails the call, names the clip, and leaves nothing to free.
    std::vector<float> bad(100, 0.f);
    bad[7] = std::nanf("");
    const float* ptrs[3] = {s.data(), bad.data(), s.data()};
    const int ok_lens[3] = {100, 100, 100};
    char* out[3] = {reinterpret_cast<char*>(1), reinterpret_cast<char*>(1), reinterpret_cast<char*>(1)};
    EXPECT_NE(parakeet_capi_transcribe_pcm_batch(ctx.get(), ptrs, ok_lens, 3, 16000, 0, out), 0);
    EXPECT_TRUE(out[0] == nullptr && out[1] == nullptr && out[2] == nullptr);
    EXPECT_NE(std::string(parakeet_capi_thread_last_error()).find("clip 1"), std::string::npos);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_batch(ctx.get(), nullptr, ok_lens, 3, 16000, 0, out), 1);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_batch(nullptr, ptrs, ok_lens, 3, 16000, 0, out), 1);
}

TEST(CapiDropin, LangVariantsIgnoreTheLanguage) {
    const std::string dir = nemo_fixtures::data_dir();
    const Ctx ctx = load(dir + "/nemo/rnnt");
    const std::string wav = dir + "/audio/speech_16k.wav";
    const std::vector<float> s = clip("speech_16k.wav");
    const std::string plain = take(parakeet_capi_transcribe_path(ctx.get(), wav.c_str(), 0));
    for (const char* lang : {static_cast<const char*>(nullptr), "", "en", "zz"}) {
        EXPECT_EQ(take(parakeet_capi_transcribe_path_lang(ctx.get(), wav.c_str(), 0, lang)), plain);
        EXPECT_EQ(take(parakeet_capi_transcribe_pcm_lang(ctx.get(), s.data(), static_cast<int>(s.size()), 16000, 0,
                                                         lang)),
                  plain);
    }
}

TEST(CapiDropin, ShutdownIsSafeWhileContextsLive) {
    const std::string dir = nemo_fixtures::data_dir();
    const Ctx ctx = load(dir + "/nemo/ctc");
    const std::vector<float> s = clip("short_1s_16k.wav");
    const std::string before = take(parakeet_capi_transcribe_pcm(ctx.get(), s.data(), static_cast<int>(s.size()), 16000, 0));
    parakeet_capi_shutdown();
    parakeet_capi_shutdown();
    EXPECT_EQ(take(parakeet_capi_transcribe_pcm(ctx.get(), s.data(), static_cast<int>(s.size()), 16000, 0)), before);
}

TEST(CapiDropin, LegacyOneShotApi) {
    const std::string dir = nemo_fixtures::data_dir();
    EXPECT_STRNE(parakeet_version(), "");
    char* text = nullptr;
    ASSERT_EQ(parakeet_transcribe_file((dir + "/nemo/ctc/model.gguf").c_str(), (dir + "/audio/speech_16k.wav").c_str(),
                                       &text),
              0);
    const Ctx ctx = load(dir + "/nemo/ctc");
    EXPECT_EQ(std::string(text), take(parakeet_capi_transcribe_path(ctx.get(), (dir + "/audio/speech_16k.wav").c_str(), 0)));
    parakeet_free_string(text);
    text = reinterpret_cast<char*>(1);
    EXPECT_NE(parakeet_transcribe_file("/nonexistent.gguf", "x.wav", &text), 0);
    EXPECT_EQ(text, nullptr);
    EXPECT_NE(std::string(parakeet_capi_thread_last_error()), "");
    EXPECT_NE(parakeet_transcribe_file((dir + "/nemo/ctc/model.gguf").c_str(), "/nonexistent.wav", &text), 0);
    EXPECT_EQ(text, nullptr);
    EXPECT_NE(parakeet_transcribe_file(nullptr, nullptr, nullptr), 0);
    parakeet_free_string(nullptr);
}

}  // namespace
