// The speaker encoder through the C ABI on the committed fixture (speaker_fixtures.h): kind
// detection at load, the embedding and its fingerprints, wrong-kind and bad-input errors, and
// enrolment and identification by PCM with a registry.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "capi_handles.h"
#include "parakeet_capi.h"
#include "speaker_fixtures.h"

namespace {

using capi_handles::Ctx;
using capi_handles::take;

std::vector<float> embed(parakeet_ctx* ctx, const std::vector<float>& pcm, int rate = 16000) {
    float* out = nullptr;
    int dim = 0;
    EXPECT_EQ(0, parakeet_capi_speaker_embed_pcm(ctx, pcm.data(), static_cast<int>(pcm.size()), rate, &out, &dim))
        << parakeet_capi_last_error(ctx);
    std::vector<float> v(out, out + dim);
    parakeet_capi_free_floats(out);
    return v;
}

TEST(CapiSpeaker, LoadsAsASpeakerModelAndEmbedsLikeSpeechBrain) {
    Ctx ctx(speaker_fixtures::model_path());
    ASSERT_NE(ctx.p, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_model_kind(ctx.p), PARAKEET_MODEL_KIND_SPEAKER);
    EXPECT_EQ(parakeet_capi_speaker_dim(ctx.p), 192);
    EXPECT_STREQ(parakeet_capi_speaker_encoder_family(ctx.p), "voicedetect:ecapa_tdnn:spkrec_tiny:192");
    const std::string id = parakeet_capi_speaker_identity(ctx.p);
    EXPECT_EQ(id.rfind("sha256:", 0), 0u);
    EXPECT_EQ(id.size(), 7u + 64u);
    EXPECT_STREQ(parakeet_capi_speaker_last_warning(ctx.p), "");
    for (const std::string& clip : speaker_fixtures::clips()) {
        const auto ref = speaker_fixtures::load(clip);
        const std::vector<float> e = embed(ctx.p, ref.pcm);
        ASSERT_EQ(e.size(), 192u);
        double dot = 0;
        for (size_t i = 0; i < e.size(); ++i) dot += double(e[i]) * ref.embedding[i];
        EXPECT_GE(dot, 0.9999) << clip;
    }
}

TEST(CapiSpeaker, WrongKindsAndBadInputGiveClearErrors) {
    Ctx speaker(speaker_fixtures::model_path());
    Ctx asr(speaker_fixtures::dir() + "/../nemo/ctc/model.gguf");
    ASSERT_NE(speaker.p, nullptr);
    ASSERT_NE(asr.p, nullptr);
    const std::vector<float> pcm(16000, 0.1f);
    float* out = reinterpret_cast<float*>(&speaker);  // must be reset to NULL on error
    int dim = 7;
    EXPECT_NE(0, parakeet_capi_speaker_embed_pcm(asr.p, pcm.data(), 16000, 16000, &out, &dim));
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(dim, 0);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "context holds an ASR model; a speaker model is needed here");
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_UNSUPPORTED);
    EXPECT_EQ(parakeet_capi_speaker_dim(asr.p), -1);
    EXPECT_EQ(parakeet_capi_speaker_encoder_family(asr.p), nullptr);
    EXPECT_EQ(parakeet_capi_speaker_identity(nullptr), nullptr);

    EXPECT_NE(0, parakeet_capi_speaker_embed_pcm(speaker.p, pcm.data(), 0, 16000, &out, &dim));
    EXPECT_STREQ(parakeet_capi_last_error(speaker.p), "no audio");
    EXPECT_NE(0, parakeet_capi_speaker_embed_pcm(speaker.p, pcm.data(), 16000, -5, &out, &dim));
    EXPECT_STREQ(parakeet_capi_last_error(speaker.p), "invalid sample rate");
    EXPECT_EQ(parakeet_capi_last_error_code(speaker.p), PARAKEET_ERROR_INVALID_AUDIO);
    EXPECT_NE(0, parakeet_capi_speaker_embed_pcm(speaker.p, pcm.data(), 16000, 16000, nullptr, &dim));
    EXPECT_NE(0, parakeet_capi_speaker_embed_pcm(nullptr, pcm.data(), 16000, 16000, &out, &dim));

    // An ASR entry point refuses the speaker context.
    EXPECT_EQ(take(parakeet_capi_transcribe_pcm(speaker.p, pcm.data(), 16000, 16000, 0)), "");
    EXPECT_NE(std::string(parakeet_capi_last_error(speaker.p)).find("speaker model"), std::string::npos)
        << parakeet_capi_last_error(speaker.p);
}

TEST(CapiSpeaker, EnrolledVoiceIsNamedUnlessASecondIsTooClose) {
    Ctx ctx(speaker_fixtures::model_path());
    const auto speech = speaker_fixtures::load("speech");
    const auto conversation = speaker_fixtures::load("conversation");
    parakeet_speaker_registry* reg = parakeet_capi_speaker_registry_new();
    const int n = static_cast<int>(speech.pcm.size());
    ASSERT_EQ(0, parakeet_capi_speaker_enroll(reg, ctx.p, "ada", speech.pcm.data(), n, 16000))
        << parakeet_capi_last_error(ctx.p);
    EXPECT_EQ(parakeet_capi_speaker_registry_size(reg), 1);
    EXPECT_STREQ(parakeet_capi_speaker_registry_encoder_family(reg), parakeet_capi_speaker_encoder_family(ctx.p));
    EXPECT_STREQ(parakeet_capi_speaker_registry_encoder_weights(reg), parakeet_capi_speaker_identity(ctx.p));
    EXPECT_EQ(take(parakeet_capi_speaker_identify_pcm_json(reg, ctx.p, speech.pcm.data(), n, 16000)),
              R"({"name":"ada","score":1.0000})");
    EXPECT_STREQ(parakeet_capi_speaker_last_warning(ctx.p), "");

    // This fixture's random network puts the two voices at cosine 0.95: with both enrolled the
    // best beats the second by less than the 0.05 margin, so no name is given.
    ASSERT_EQ(0, parakeet_capi_speaker_enroll(reg, ctx.p, "bob", conversation.pcm.data(),
                                              static_cast<int>(conversation.pcm.size()), 16000));
    EXPECT_EQ(take(parakeet_capi_speaker_identify_pcm_json(reg, ctx.p, speech.pcm.data(), n, 16000)),
              R"({"name":"","score":1.0000})");

    EXPECT_NE(0, parakeet_capi_speaker_enroll(reg, ctx.p, "", speech.pcm.data(), n, 16000));
    EXPECT_STREQ(parakeet_capi_last_error(ctx.p), "speaker name is empty");
    EXPECT_EQ(parakeet_capi_speaker_registry_size(reg), 2);
    parakeet_capi_speaker_registry_free(reg);
}

TEST(CapiSpeaker, RegistryOfOtherWeightsWarnsAndOfOtherFamilyFails) {
    Ctx ctx(speaker_fixtures::model_path());
    const auto speech = speaker_fixtures::load("speech");
    const int n = static_cast<int>(speech.pcm.size());
    const std::vector<float> v = embed(ctx.p, speech.pcm);
    const char* family = parakeet_capi_speaker_encoder_family(ctx.p);

    parakeet_speaker_registry* other_weights = parakeet_capi_speaker_registry_new();
    ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding_fp(other_weights, "ada", v.data(), 192, family,
                                                                 "sha256:0000"));
    EXPECT_EQ(take(parakeet_capi_speaker_identify_pcm_json(other_weights, ctx.p, speech.pcm.data(), n, 16000)),
              R"({"name":"ada","score":1.0000})");
    EXPECT_STREQ(parakeet_capi_speaker_last_warning(ctx.p), "other weights");

    parakeet_speaker_registry* other_family = parakeet_capi_speaker_registry_new();
    ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding_fp(other_family, "ada", v.data(), 192,
                                                                 "voicedetect:campplus:x:192", "sha256:1"));
    EXPECT_EQ(parakeet_capi_speaker_identify_pcm_json(other_family, ctx.p, speech.pcm.data(), n, 16000), nullptr);
    EXPECT_NE(std::string(parakeet_capi_last_error(ctx.p)).find("encoder family"), std::string::npos);

    parakeet_speaker_registry* plain = parakeet_capi_speaker_registry_new();
    ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding(plain, "ada", v.data(), 192));
    EXPECT_EQ(take(parakeet_capi_speaker_identify_pcm_json(plain, ctx.p, speech.pcm.data(), n, 16000)),
              R"({"name":"ada","score":1.0000})");
    EXPECT_STREQ(parakeet_capi_speaker_last_warning(ctx.p), "no encoder fingerprint");
    parakeet_capi_speaker_registry_set_strict(plain, 1);
    EXPECT_EQ(parakeet_capi_speaker_identify_pcm_json(plain, ctx.p, speech.pcm.data(), n, 16000), nullptr);

    parakeet_speaker_registry* wrong_dim = parakeet_capi_speaker_registry_new();
    ASSERT_EQ(0, parakeet_capi_speaker_registry_add_embedding(wrong_dim, "ada", v.data(), 64));
    EXPECT_EQ(parakeet_capi_speaker_identify_pcm_json(wrong_dim, ctx.p, speech.pcm.data(), n, 16000), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(ctx.p), "registry holds 64-value embeddings, this model produces 192");
    for (auto* r : {other_weights, other_family, plain, wrong_dim}) parakeet_capi_speaker_registry_free(r);
}

}  // namespace

namespace {

TEST(CapiSpeaker, DiarizeNamedAddsNamesToTheDiarizationDocument) {
    Ctx diar(speaker_fixtures::dir() + "/../nemo/sortformer_offline/model.gguf");
    Ctx enc(speaker_fixtures::model_path());
    ASSERT_NE(diar.p, nullptr);
    const auto clip = speaker_fixtures::load("conversation");
    const int n = static_cast<int>(clip.pcm.size());
    parakeet_speaker_registry* reg = parakeet_capi_speaker_registry_new();
    ASSERT_EQ(0, parakeet_capi_speaker_enroll(reg, enc.p, "Ada", clip.pcm.data(), n, 16000));
    const std::string plain = take(parakeet_capi_diarize_pcm(diar.p, clip.pcm.data(), n, 16000));
    const std::string named =
        take(parakeet_capi_diarize_named_pcm_json(diar.p, enc.p, reg, clip.pcm.data(), n, 16000, 0, 0));
    ASSERT_FALSE(named.empty()) << parakeet_capi_last_error(diar.p) << parakeet_capi_last_error(enc.p);
    // The same document with "names" before its closing brace; this random diarizer's slots
    // overlap too much for 2 s of clean voice, so every slot is unnamed with score 0.
    ASSERT_EQ(named.compare(0, plain.size() - 1, plain, 0, plain.size() - 1), 0) << named;
    const std::string names = named.substr(plain.size() - 1);
    EXPECT_EQ(names.rfind(",\"names\":{\"0\":{\"name\":\"\",\"score\":0.0000}", 0), 0u) << names;

    EXPECT_EQ(parakeet_capi_diarize_named_pcm_json(diar.p, enc.p, reg, clip.pcm.data(), 0, 16000, 0, 0), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(diar.p), "invalid samples buffer");
    EXPECT_EQ(parakeet_capi_diarize_named_pcm_json(nullptr, enc.p, reg, clip.pcm.data(), n, 16000, 0, 0), nullptr);
    EXPECT_EQ(parakeet_capi_diarize_named_pcm_json(diar.p, diar.p, reg, clip.pcm.data(), n, 16000, 0, 0), nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(diar.p), "context holds a diarization model; a speaker model is needed here");
    parakeet_capi_speaker_registry_free(reg);
}

}  // namespace

namespace {

TEST(CapiSpeaker, DiarizeProfilesGivesEachSlotsCleanVoiceOrWhyNot) {
    Ctx diar(speaker_fixtures::dir() + "/../nemo/sortformer_offline/model.gguf");
    Ctx enc(speaker_fixtures::model_path());
    const auto clip = speaker_fixtures::load("conversation");
    const int n = static_cast<int>(clip.pcm.size());
    const std::string named =
        take(parakeet_capi_diarize_named_pcm_json(diar.p, enc.p, nullptr, clip.pcm.data(), n, 16000, 0, 0));
    const std::string profiles =
        take(parakeet_capi_diarize_profiles_pcm_json(diar.p, enc.p, nullptr, clip.pcm.data(), n, 16000, 0, 0));
    ASSERT_FALSE(profiles.empty()) << parakeet_capi_last_error(enc.p);
    ASSERT_EQ(profiles.compare(0, named.size() - 1, named, 0, named.size() - 1), 0) << profiles;
    const std::string tail = profiles.substr(named.size() - 1);
    const std::string head = std::string(",\"speaker_profiles\":{\"version\":1,\"encoder\":{\"identity\":\"") +
                             parakeet_capi_speaker_identity(enc.p) + "\",\"dimension\":192},\"speakers\":[{\"speaker\":0,";
    EXPECT_EQ(tail.rfind(head, 0), 0u) << tail;
    // Every slot of this random diarizer has under 2 s of clean voice: a reason, no embedding.
    EXPECT_NE(tail.find("\"unavailable_reason\":\"insufficient_clean_speech\""), std::string::npos);
    EXPECT_EQ(tail.find("\"embedding\""), std::string::npos);
    EXPECT_EQ(tail.find("\"unavailable_reason\":null"), std::string::npos);
}

}  // namespace

namespace {

TEST(CapiSpeaker, TranscribeAndDiarizeNamedIsTheSasDocumentWithNames) {
    Ctx asr(speaker_fixtures::dir() + "/../nemo/hybrid_tdt_ctc/model.gguf");
    Ctx diar(speaker_fixtures::dir() + "/../nemo/sortformer_offline/model.gguf");
    Ctx enc(speaker_fixtures::model_path());
    const auto clip = speaker_fixtures::load("conversation");
    const int n = static_cast<int>(clip.pcm.size());
    parakeet_speaker_registry* reg = parakeet_capi_speaker_registry_new();
    ASSERT_EQ(0, parakeet_capi_speaker_enroll(reg, enc.p, "Ada", clip.pcm.data(), n, 16000));
    const std::string plain = take(parakeet_capi_transcribe_and_diarize_json(asr.p, diar.p, clip.pcm.data(), n, 16000));
    const std::string named = take(
        parakeet_capi_transcribe_and_diarize_named_json(asr.p, diar.p, enc.p, reg, clip.pcm.data(), n, 16000));
    ASSERT_FALSE(named.empty()) << parakeet_capi_last_error(enc.p) << parakeet_capi_last_error(asr.p);
    EXPECT_EQ(named.rfind("{\"speakers\":4,\"names\":{\"0\":{\"name\":\"\",\"score\":0.0000}", 0), 0u) << named;
    // Without the names block and the per-item names it is the plain document.
    const size_t names_at = std::string("{\"speakers\":4").size();  // the block is ",\"names\":{...}"
    std::string stripped = named;
    stripped.erase(names_at, named.find(",\"utterances\"") - names_at);
    const std::string item_name = ",\"name\":\"\",\"name_score\":0.0000";
    size_t items = 0;
    for (size_t at; (at = stripped.find(item_name)) != std::string::npos; ++items) stripped.erase(at, item_name.size());
    EXPECT_EQ(stripped, plain);
    EXPECT_GT(items, 1u);  // utterances and words

    EXPECT_EQ(parakeet_capi_transcribe_and_diarize_named_json(asr.p, diar.p, nullptr, reg, clip.pcm.data(), n, 16000),
              nullptr);
    EXPECT_EQ(parakeet_capi_transcribe_and_diarize_named_json(asr.p, diar.p, asr.p, reg, clip.pcm.data(), n, 16000),
              nullptr);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "context holds an ASR model; a speaker model is needed here");
    parakeet_capi_speaker_registry_free(reg);
}

}  // namespace
