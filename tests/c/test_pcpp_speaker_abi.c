/*
 * A C program written against parakeet.cpp's speaker calls (ABI 9/10 and the additive
 * fingerprint, embedding and free calls), linked to this library. Like test_pcpp_abi.c it does
 * not include parakeet_capi.h: the declarations below restate parakeet.cpp's header, so a wrong
 * signature or a missing symbol fails to link or to run. Each function is also found by dlsym
 * (a program that binds by name) and called: load a speaker model, embed, enrol, identify,
 * add embeddings with and without fingerprints, strictness, a registry file round trip, and
 * diarization with names and with profiles (on a diarization model in parakeet.cpp's schema), and
 * speaker-attributed transcription with names.
 *
 * Usage: test_pcpp_speaker_abi SPEAKER.gguf ASR.gguf REGISTRY_PATH SORTFORMER_PCPP.gguf
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parakeet.cpp's declarations (restated) ---- */
typedef struct parakeet_ctx parakeet_ctx;
typedef struct parakeet_speaker_registry parakeet_speaker_registry;
parakeet_ctx* parakeet_capi_load(const char* gguf_path);
void parakeet_capi_free(parakeet_ctx* ctx);
int parakeet_capi_model_kind(const parakeet_ctx* ctx);
const char* parakeet_capi_last_error(parakeet_ctx* ctx);
void parakeet_capi_free_string(char* s);
int parakeet_capi_speaker_dim(const parakeet_ctx* ctx);
parakeet_speaker_registry* parakeet_capi_speaker_registry_new(void);
void parakeet_capi_speaker_registry_free(parakeet_speaker_registry* reg);
int parakeet_capi_speaker_registry_size(const parakeet_speaker_registry* reg);
const char* parakeet_capi_speaker_registry_last_error(const parakeet_speaker_registry* reg);
int parakeet_capi_speaker_enroll(parakeet_speaker_registry* reg, parakeet_ctx* speaker, const char* name,
                                 const float* pcm, int n, int sample_rate);
int parakeet_capi_speaker_embed_pcm(parakeet_ctx* speaker, const float* pcm, int n_samples, int sample_rate,
                                    float** out_embedding, int* out_dim);
void parakeet_capi_free_floats(float* p);
int parakeet_capi_speaker_registry_add_embedding(parakeet_speaker_registry* reg, const char* name,
                                                 const float* embedding, int dim);
int parakeet_capi_speaker_registry_add_embedding_fp(parakeet_speaker_registry* reg, const char* name,
                                                    const float* embedding, int dim, const char* encoder_family,
                                                    const char* encoder_weights);
const char* parakeet_capi_speaker_registry_encoder_family(const parakeet_speaker_registry* reg);
const char* parakeet_capi_speaker_registry_encoder_weights(const parakeet_speaker_registry* reg);
void parakeet_capi_speaker_registry_set_strict(parakeet_speaker_registry* reg, int strict);
const char* parakeet_capi_speaker_encoder_family(const parakeet_ctx* speaker);
const char* parakeet_capi_speaker_last_warning(const parakeet_ctx* speaker);
int parakeet_capi_speaker_registry_save(const parakeet_speaker_registry* reg, const char* path);
parakeet_speaker_registry* parakeet_capi_speaker_registry_load(const char* path);
char* parakeet_capi_speaker_identify_pcm_json(parakeet_speaker_registry* reg, parakeet_ctx* speaker,
                                              const float* pcm, int n, int sample_rate);
const char* parakeet_capi_speaker_identity(const parakeet_ctx* speaker);
char* parakeet_capi_diarize_named_pcm_json(parakeet_ctx* diar, parakeet_ctx* speaker, parakeet_speaker_registry* reg,
                                           const float* samples, int n_samples, int sample_rate,
                                           float accept_threshold, float margin);
char* parakeet_capi_transcribe_and_diarize_named_json(parakeet_ctx* asr, parakeet_ctx* diar, parakeet_ctx* speaker,
                                                      parakeet_speaker_registry* registry, const float* samples,
                                                      int n_samples, int sample_rate);
char* parakeet_capi_diarize_profiles_pcm_json(parakeet_ctx* diar, parakeet_ctx* speaker, parakeet_speaker_registry* reg,
                                              const float* samples, int n_samples, int sample_rate,
                                              float accept_threshold, float margin);
/* ---- end of parakeet.cpp's declarations ---- */

#define PARAKEET_MODEL_KIND_SPEAKER 4

static const char* const SPEAKER_FUNCTIONS[] = {
    "parakeet_capi_speaker_dim",
    "parakeet_capi_speaker_registry_new",
    "parakeet_capi_speaker_registry_free",
    "parakeet_capi_speaker_registry_size",
    "parakeet_capi_speaker_registry_last_error",
    "parakeet_capi_speaker_enroll",
    "parakeet_capi_speaker_embed_pcm",
    "parakeet_capi_free_floats",
    "parakeet_capi_speaker_registry_add_embedding",
    "parakeet_capi_speaker_registry_add_embedding_fp",
    "parakeet_capi_speaker_registry_encoder_family",
    "parakeet_capi_speaker_registry_encoder_weights",
    "parakeet_capi_speaker_registry_set_strict",
    "parakeet_capi_speaker_encoder_family",
    "parakeet_capi_speaker_last_warning",
    "parakeet_capi_speaker_registry_save",
    "parakeet_capi_speaker_registry_load",
    "parakeet_capi_speaker_identify_pcm_json",
    "parakeet_capi_speaker_identity",
    "parakeet_capi_diarize_named_pcm_json",
    "parakeet_capi_diarize_profiles_pcm_json",
    "parakeet_capi_transcribe_and_diarize_named_json",
};

#include "c_checks.h"

/* One second of a voiced sound at 16 kHz (a 140 Hz pulse train's harmonics, deterministic). */
static void voice(float* pcm, int n) {
    const double pi = 3.14159265358979323846;
    for (int i = 0; i < n; ++i) {
        double v = 0;
        for (int h = 1; h <= 20; ++h) v += sin(2 * pi * 140.0 * h * i / 16000.0 + 0.3 * h) / h;
        pcm[i] = (float)(0.05 * v);
    }
}

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s SPEAKER.gguf ASR.gguf REGISTRY_PATH SORTFORMER_PCPP.gguf\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof SPEAKER_FUNCTIONS / sizeof SPEAKER_FUNCTIONS[0]; ++i) {
        const int found = dlsym(RTLD_DEFAULT, SPEAKER_FUNCTIONS[i]) != NULL;
        if (!found) fprintf(stderr, "speaker function not found: %s\n", SPEAKER_FUNCTIONS[i]);
        CHECK(found);
    }
    parakeet_ctx* enc = parakeet_capi_load(argv[1]);
    parakeet_ctx* asr = parakeet_capi_load(argv[2]);
    CHECK(enc != NULL && asr != NULL);
    if (enc == NULL || asr == NULL) return report_checks();
    CHECK(parakeet_capi_model_kind(enc) == PARAKEET_MODEL_KIND_SPEAKER);
    const int dim = parakeet_capi_speaker_dim(enc);
    CHECK(dim == 192 && parakeet_capi_speaker_dim(asr) == -1);
    CHECK(contains(parakeet_capi_speaker_encoder_family(enc), "voicedetect:ecapa_tdnn:"));
    CHECK(contains(parakeet_capi_speaker_identity(enc), "sha256:"));

    enum { N = 16000 };
    static float pcm[N], pcm48[3 * N];
    voice(pcm, N);
    for (int i = 0; i < 3 * N; ++i) pcm48[i] = pcm[i / 3];
    float* e = NULL;
    int e_dim = 0;
    CHECK(parakeet_capi_speaker_embed_pcm(enc, pcm, N, 16000, &e, &e_dim) == 0 && e != NULL && e_dim == dim);
    double norm = 0;
    for (int i = 0; e && i < e_dim; ++i) norm += (double)e[i] * e[i];
    CHECK(fabs(norm - 1.0) < 1e-5);
    float* bad = e;
    int bad_dim = 1;
    CHECK(parakeet_capi_speaker_embed_pcm(asr, pcm, N, 16000, &bad, &bad_dim) != 0 && bad == NULL && bad_dim == 0);
    CHECK(contains(parakeet_capi_last_error(asr), "a speaker model is needed here"));

    parakeet_speaker_registry* reg = parakeet_capi_speaker_registry_new();
    CHECK(reg != NULL && parakeet_capi_speaker_registry_size(reg) == 0);
    CHECK(parakeet_capi_speaker_enroll(reg, enc, "Ada", pcm48, 3 * N, 48000) == 0);
    CHECK(parakeet_capi_speaker_registry_size(reg) == 1);
    CHECK(strcmp(parakeet_capi_speaker_registry_encoder_family(reg), parakeet_capi_speaker_encoder_family(enc)) == 0);
    CHECK(strcmp(parakeet_capi_speaker_registry_encoder_weights(reg), parakeet_capi_speaker_identity(enc)) == 0);
    char* who = parakeet_capi_speaker_identify_pcm_json(reg, enc, pcm, N, 16000);
    /* enrolled at 48 kHz, asked at 16 kHz: the resampler brings both to the same voice */
    CHECK(contains(who, "{\"name\":\"Ada\",\"score\":") && atof(strstr(who, "\"score\":") + 8) > 0.99);
    parakeet_capi_free_string(who);
    CHECK(strcmp(parakeet_capi_speaker_last_warning(enc), "") == 0);
    CHECK(parakeet_capi_speaker_enroll(reg, enc, "", pcm, N, 16000) != 0);
    CHECK(strcmp(parakeet_capi_last_error(enc), "speaker name is empty") == 0);

    CHECK(parakeet_capi_speaker_registry_add_embedding_fp(reg, "Bob", e, e_dim, "voicedetect:campplus:x:192", "w") != 0);
    CHECK(contains(parakeet_capi_speaker_registry_last_error(reg), "encoder family"));
    CHECK(parakeet_capi_speaker_registry_save(reg, argv[3]) == 0);
    parakeet_speaker_registry* back = parakeet_capi_speaker_registry_load(argv[3]);
    CHECK(back != NULL && parakeet_capi_speaker_registry_size(back) == 1);
    parakeet_capi_speaker_registry_free(back);
    remove(argv[3]);

    parakeet_speaker_registry* plain = parakeet_capi_speaker_registry_new();
    CHECK(parakeet_capi_speaker_registry_add_embedding(plain, "Ada", e, e_dim) == 0);
    who = parakeet_capi_speaker_identify_pcm_json(plain, enc, pcm, N, 16000);
    CHECK(contains(who, "\"name\":\"Ada\""));
    parakeet_capi_free_string(who);
    CHECK(strcmp(parakeet_capi_speaker_last_warning(enc), "no encoder fingerprint") == 0);
    parakeet_capi_speaker_registry_set_strict(plain, 1);
    CHECK(parakeet_capi_speaker_identify_pcm_json(plain, enc, pcm, N, 16000) == NULL);
    CHECK(parakeet_capi_speaker_registry_add_embedding(plain, "Bob", e, e_dim - 1) != 0);
    CHECK(contains(parakeet_capi_speaker_registry_last_error(plain), "registry expects 192"));

    parakeet_ctx* diar = parakeet_capi_load(argv[4]);
    CHECK(diar != NULL);
    char* named = parakeet_capi_diarize_named_pcm_json(diar, enc, reg, pcm, N, 16000, 0.0f, 0.0f);
    CHECK(contains(named, "{\"speakers\":") && contains(named, "\"names\":{"));
    parakeet_capi_free_string(named);
    CHECK(parakeet_capi_diarize_named_pcm_json(diar, enc, reg, pcm, 0, 16000, 0.0f, 0.0f) == NULL);
    CHECK(strcmp(parakeet_capi_last_error(diar), "invalid samples buffer") == 0);
    CHECK(parakeet_capi_diarize_named_pcm_json(NULL, enc, reg, pcm, N, 16000, 0.0f, 0.0f) == NULL);
    named = parakeet_capi_diarize_profiles_pcm_json(diar, enc, NULL, pcm, N, 16000, 0.0f, 0.0f);
    CHECK(contains(named, "\"speaker_profiles\":{\"version\":1,\"encoder\":{\"identity\":\"sha256:"));
    parakeet_capi_free_string(named);
    named = parakeet_capi_transcribe_and_diarize_named_json(asr, diar, enc, reg, pcm, N, 16000);
    CHECK(contains(named, "{\"speakers\":") && contains(named, "\"names\":{") && contains(named, "\"utterances\":["));
    parakeet_capi_free_string(named);
    parakeet_capi_free(diar);

    parakeet_capi_free_floats(e);
    parakeet_capi_free_floats(NULL);
    parakeet_capi_speaker_registry_free(plain);
    parakeet_capi_speaker_registry_free(reg);
    parakeet_capi_speaker_registry_free(NULL);
    parakeet_capi_free(asr);
    parakeet_capi_free(enc);
    return report_checks();
}
