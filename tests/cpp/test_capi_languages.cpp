// Languages through the C ABI on the prompt-conditioned fixture model (tests/data/nemo/ca_prompt,
// a NeMo 3.0.0 EncDecHybridRNNTCTCBPEModelWithPrompt; docs/fixtures.md): every _lang call and
// stream_begin_lang / stream_begin_with's "language" give NeMo's tokens for the locale (the
// cawref_*_<locale> references, transcribe() and the cache-aware pipeline with
// set_inference_prompt), NULL and "" give the default locale's, a locale the model lacks is an
// error naming the known ones, and a model without prompts ignores the language.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "capi_test_support.h"
#include "gguf/gguf_reader.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

using capi_test::Ctx;
using capi_test::take;

std::string dir_of(const char* model) { return nemo_fixtures::data_dir() + "/nemo/" + model; }

Ctx load(const char* model) { return capi_test::load(dir_of(model)); }

struct Ref {
    std::vector<float> samples;
    std::string offline_text, stream_text;
};

Ref ref(const std::string& clip, const std::string& head, const std::string& lang) {
    const pk::GgufReader r = pk::GgufReader::open(dir_of("ca_prompt") + "/cawref_" + clip + "_" + head + "_4-1_" + lang +
                                                  ".gguf");
    return {nemo_fixtures::clip_samples(r), r.get_string("ref.offline.text"), r.get_string("ref.stream.text")};
}

const char* const kLocales[] = {"auto", "en-US", "de-DE", "ja-JP"};

std::string streamed(parakeet_stream* s, const std::vector<float>& samples) {
    EXPECT_NE(s, nullptr) << parakeet_capi_last_error(nullptr);
    if (s == nullptr) return "(null)";
    std::string text;
    for (size_t at = 0; at < samples.size(); at += 1600) {
        const int n = static_cast<int>(std::min<size_t>(1600, samples.size() - at));
        text += take(parakeet_capi_stream_feed(s, samples.data() + at, n, nullptr));
    }
    text += take(parakeet_capi_stream_finalize(s));
    parakeet_capi_stream_free(s);
    return text;
}

TEST(CapiLanguages, TheLocalesGiveNeMosDifferentResults) {
    // The fixture is only a test of the prompt if NeMo's outputs differ by locale.
    EXPECT_NE(ref("speech", "rnnt", "auto").offline_text, ref("speech", "rnnt", "de-DE").offline_text);
    EXPECT_NE(ref("speech", "ctc", "en-US").offline_text, ref("speech", "ctc", "ja-JP").offline_text);
}

TEST(CapiLanguages, OfflineLangCallsGiveNeMosTranscribeForTheLocale) {
    Ctx ctx = load("ca_prompt");
    ASSERT_TRUE(ctx);
    for (const char* lang : kLocales) {
        for (const auto& [head, decoder] : {std::pair<std::string, int>{"rnnt", PARAKEET_DECODER_TRANSDUCER},
                                           std::pair<std::string, int>{"ctc", PARAKEET_DECODER_CTC}}) {
            const Ref r = ref("speech", head, lang);
            const float* s = r.samples.data();
            const int n = static_cast<int>(r.samples.size());
            EXPECT_EQ(take(parakeet_capi_transcribe_pcm_lang(ctx.get(), s, n, 16000, decoder, lang)), r.offline_text)
                << lang << " " << head;
            char* out = nullptr;
            ASSERT_EQ(parakeet_capi_transcribe_pcm_batch_lang(ctx.get(), &s, &n, 1, 16000, decoder, lang, &out), 0);
            EXPECT_EQ(take(out), r.offline_text) << lang << " " << head << " (batch)";
        }
    }
    // NULL and "" are the model's default (NeMo's target_lang default, "auto").
    const Ref def = ref("speech", "rnnt", "auto");
    const int n = static_cast<int>(def.samples.size());
    EXPECT_EQ(take(parakeet_capi_transcribe_pcm_lang(ctx.get(), def.samples.data(), n, 16000, 0, nullptr)),
              def.offline_text);
    EXPECT_EQ(take(parakeet_capi_transcribe_pcm_lang(ctx.get(), def.samples.data(), n, 16000, 0, "")),
              def.offline_text);
    EXPECT_EQ(take(parakeet_capi_transcribe_pcm(ctx.get(), def.samples.data(), n, 16000, 0)), def.offline_text);
}

TEST(CapiLanguages, StreamsTakeTheLocale) {
    Ctx ctx = load("ca_prompt");
    ASSERT_TRUE(ctx);
    for (const char* lang : kLocales) {
        const Ref r = ref("speech", "rnnt", lang);
        EXPECT_EQ(streamed(parakeet_capi_stream_begin_lang(ctx.get(), lang), r.samples), r.stream_text) << lang;
        const std::string opts = std::string("{\"language\": \"") + lang + "\"}";
        EXPECT_EQ(streamed(parakeet_capi_stream_begin_with(ctx.get(), opts.c_str()), r.samples), r.stream_text) << lang;
        const Ref c = ref("speech", "ctc", lang);
        const std::string ctc = std::string("{\"language\": \"") + lang + "\", \"decoder\": 1}";
        EXPECT_EQ(streamed(parakeet_capi_stream_begin_with(ctx.get(), ctc.c_str()), c.samples), c.stream_text) << lang;
    }
    const Ref def = ref("speech", "rnnt", "auto");
    EXPECT_EQ(streamed(parakeet_capi_stream_begin(ctx.get()), def.samples), def.stream_text);
    EXPECT_EQ(streamed(parakeet_capi_stream_begin_lang(ctx.get(), nullptr), def.samples), def.stream_text);
}

TEST(CapiLanguages, AnUnknownLocaleIsAnErrorNamingTheKnownOnes) {
    Ctx ctx = load("ca_prompt");
    ASSERT_TRUE(ctx);
    const Ref r = ref("short_1s", "rnnt", "auto");
    const int n = static_cast<int>(r.samples.size());
    const std::string known = "auto, en-US, de-DE, ja-JP";
    EXPECT_EQ(parakeet_capi_transcribe_pcm_lang(ctx.get(), r.samples.data(), n, 16000, 0, "fr-FR"), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(ctx.get()), PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(parakeet_capi_last_error(ctx.get())).find("'fr-FR'"), std::string::npos);
    EXPECT_NE(std::string(parakeet_capi_last_error(ctx.get())).find(known), std::string::npos)
        << parakeet_capi_last_error(ctx.get());
    EXPECT_EQ(parakeet_capi_stream_begin_lang(ctx.get(), "xx"), nullptr);
    EXPECT_NE(std::string(parakeet_capi_last_error(ctx.get())).find(known), std::string::npos);
    EXPECT_EQ(parakeet_capi_stream_begin_with(ctx.get(), "{\"language\": \"en\"}"), nullptr);
    EXPECT_NE(std::string(parakeet_capi_last_error(ctx.get())).find(known), std::string::npos);
    EXPECT_EQ(parakeet_capi_stream_begin_with(ctx.get(), "{\"language\": 3}"), nullptr);
    char* out = reinterpret_cast<char*>(1);
    const float* s = r.samples.data();
    EXPECT_NE(parakeet_capi_transcribe_pcm_batch_lang(ctx.get(), &s, &n, 1, 16000, 0, "fr-FR", &out), 0);
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_nbest_json(ctx.get(), s, n, 16000, 2, 1, 1, "fr-FR"), nullptr);
    EXPECT_NE(std::string(parakeet_capi_last_error(ctx.get())).find(known), std::string::npos);
}

TEST(CapiLanguages, AModelWithoutPromptsIgnoresTheLanguage) {
    Ctx ctx = load("ca_hybrid");
    ASSERT_TRUE(ctx);
    const pk::GgufReader r = pk::GgufReader::open(dir_of("ca_hybrid") + "/cawref_short_1s_rnnt_4-3.gguf");
    const std::vector<float> samples = nemo_fixtures::clip_samples(r);
    const int n = static_cast<int>(samples.size());
    EXPECT_EQ(take(parakeet_capi_transcribe_pcm_lang(ctx.get(), samples.data(), n, 16000, 0, "fr-FR")),
              r.get_string("ref.offline.text"));
    EXPECT_EQ(streamed(parakeet_capi_stream_begin_lang(ctx.get(), "anything"), samples), r.get_string("ref.stream.text"));
}

}  // namespace
