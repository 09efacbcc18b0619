/*
 * A C program written against parakeet.cpp's C API as it publishes it, linked to this
 * library. It does not include parakeet_capi.h: the declarations below restate parakeet.cpp's
 * (its include/parakeet_capi.h, ABI 6 = the 0.2.2 wheel), so a wrong signature or a missing
 * symbol here fails to link or to run. The checks are those its own C-ABI tests make
 * (test_capi: load, transcribe by path and PCM, errors; test_capi_timestamps: the JSON
 * document's keys and word/token times; test_capi_batch_json: a batch equals single calls),
 * adapted to our fixture models, plus LocalAI's mandatory symbol set (abi_version, load, free,
 * transcribe_path, transcribe_path_json, stream_begin/feed/finalize/free, free_string,
 * last_error), all of which must link.
 *
 * Usage: test_pcpp_abi HYBRID.gguf WAV
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parakeet.cpp's declarations (restated) ---- */
typedef struct parakeet_ctx parakeet_ctx;
typedef struct parakeet_stream parakeet_stream;
typedef struct parakeet_stream_event {
    int token;
    int is_eob;
    int encoder_frame;
    float time_sec;
} parakeet_stream_event;

int parakeet_capi_abi_version(void);
parakeet_ctx* parakeet_capi_load(const char* gguf_path);
void parakeet_capi_free(parakeet_ctx* ctx);
char* parakeet_capi_transcribe_path(parakeet_ctx* ctx, const char* wav_path, int decoder);
char* parakeet_capi_transcribe_pcm(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate,
                                   int decoder);
char* parakeet_capi_transcribe_path_lang(parakeet_ctx* ctx, const char* wav_path, int decoder,
                                         const char* target_lang);
char* parakeet_capi_transcribe_pcm_lang(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate,
                                        int decoder, const char* target_lang);
int parakeet_capi_transcribe_pcm_batch(parakeet_ctx* ctx, const float* const* samples, const int* n_samples,
                                       int n_clips, int sample_rate, int decoder, char** out);
char* parakeet_capi_transcribe_path_json(parakeet_ctx* ctx, const char* wav_path, int decoder);
char* parakeet_capi_transcribe_pcm_batch_json(parakeet_ctx* ctx, const float* samples_concat, const int* n_samples,
                                              int n_clips, int sample_rate, int decoder);
char* parakeet_capi_transcribe_pcm_batch_json_lang(parakeet_ctx* ctx, const float* samples_concat,
                                                   const int* n_samples, int n_clips, int sample_rate, int decoder,
                                                   const char* target_lang);
int parakeet_capi_transcribe_pcm_logits(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate,
                                        float** out_logits, int* out_T, int* out_vocab_plus_1);
void parakeet_capi_free_logits(float* logits);
parakeet_stream* parakeet_capi_stream_begin(parakeet_ctx* ctx);
parakeet_stream* parakeet_capi_stream_begin_lang(parakeet_ctx* ctx, const char* target_lang);
char* parakeet_capi_stream_feed(parakeet_stream* s, const float* pcm, int n_samples, int* eou_out);
char* parakeet_capi_stream_finalize(parakeet_stream* s);
char* parakeet_capi_stream_feed_json(parakeet_stream* s, const float* pcm, int n_samples);
char* parakeet_capi_stream_finalize_json(parakeet_stream* s);
int parakeet_capi_stream_drain_events(parakeet_stream* s, parakeet_stream_event** out_events);
void parakeet_capi_free_events(parakeet_stream_event* events);
void parakeet_capi_stream_free(parakeet_stream* s);
void parakeet_capi_free_string(char* s);
const char* parakeet_capi_last_error(parakeet_ctx* ctx);
void parakeet_capi_shutdown(void);
const char* parakeet_version(void);
int parakeet_transcribe_file(const char* model_path, const char* wav_path, char** out_text);
void parakeet_free_string(char* s);
/* ---- end of parakeet.cpp's declarations ---- */

#include "c_checks.h"

/* Reads a 16-bit PCM mono WAV file (the fixture clips) as floats in [-1, 1). */
static float* read_wav16(const char* path, int* n_out) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char h[44];
    if (fread(h, 1, 44, f) != 44) {
        fclose(f);
        return NULL;
    }
    const long bytes = (long)h[40] | ((long)h[41] << 8) | ((long)h[42] << 16) | ((long)h[43] << 24);
    const int n = (int)(bytes / 2);
    float* s = (float*)malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; ++i) {
        unsigned char b[2];
        if (fread(b, 1, 2, f) != 2) break;
        s[i] = (float)(int16_t)(b[0] | (b[1] << 8)) / 32768.0f;
    }
    fclose(f);
    *n_out = n;
    return s;
}

static void test_capi(parakeet_ctx* ctx, const char* wav, const float* s, int n) {
    for (int decoder = 0; decoder <= 2; ++decoder) {
        char* a = parakeet_capi_transcribe_path(ctx, wav, decoder);
        char* b = parakeet_capi_transcribe_pcm(ctx, s, n, 16000, decoder);
        char* c = parakeet_capi_transcribe_path_lang(ctx, wav, decoder, "en");
        char* d = parakeet_capi_transcribe_pcm_lang(ctx, s, n, 16000, decoder, NULL);
        CHECK(a && b && c && d && strlen(a) > 0);
        if (a && b && c && d) CHECK(strcmp(a, b) == 0 && strcmp(a, c) == 0 && strcmp(a, d) == 0);
        parakeet_capi_free_string(a);
        parakeet_capi_free_string(b);
        parakeet_capi_free_string(c);
        parakeet_capi_free_string(d);
    }
    CHECK(parakeet_capi_transcribe_path(ctx, "/nonexistent.wav", 0) == NULL);
    CHECK(strlen(parakeet_capi_last_error(ctx)) > 0);
    CHECK(parakeet_capi_transcribe_pcm(ctx, s, n, 16000, 9) == NULL);
    CHECK(strlen(parakeet_capi_last_error(ctx)) > 0);
    CHECK(parakeet_capi_load("/nonexistent.gguf") == NULL);
}

static void test_capi_timestamps(parakeet_ctx* ctx, const char* wav) {
    char* doc = parakeet_capi_transcribe_path_json(ctx, wav, 0);
    CHECK(doc != NULL);
    CHECK(contains(doc, "\"text\":") && contains(doc, "\"frame_sec\":") && contains(doc, "\"words\":[{\"w\":") &&
          contains(doc, "\"start\":") && contains(doc, "\"end\":") && contains(doc, "\"conf\":") &&
          contains(doc, "\"tokens\":[{\"id\":") && contains(doc, "\"t\":"));
    parakeet_capi_free_string(doc);
}

static void test_capi_batch_json(parakeet_ctx* ctx, const float* s, int n) {
    const int half = n / 2;
    const int lens[2] = {half, n - half};
    char* batch = parakeet_capi_transcribe_pcm_batch_json(ctx, s, lens, 2, 16000, 0);
    char* batch_lang = parakeet_capi_transcribe_pcm_batch_json_lang(ctx, s, lens, 2, 16000, 0, "en");
    CHECK(batch && batch[0] == '[' && batch_lang && strcmp(batch, batch_lang) == 0);
    const float* clips[2] = {s, s + half};
    char* texts[2] = {NULL, NULL};
    CHECK(parakeet_capi_transcribe_pcm_batch(ctx, clips, lens, 2, 16000, 0, texts) == 0);
    for (int i = 0; i < 2; ++i) {
        char* single = parakeet_capi_transcribe_pcm(ctx, clips[i], lens[i], 16000, 0);
        CHECK(single && texts[i] && strcmp(single, texts[i]) == 0);
        parakeet_capi_free_string(single);
        parakeet_capi_free_string(texts[i]);
    }
    char* empty = parakeet_capi_transcribe_pcm_batch_json(ctx, s, lens, 0, 16000, 0);
    CHECK(empty && strcmp(empty, "[]") == 0);
    parakeet_capi_free_string(empty);
    parakeet_capi_free_string(batch);
    parakeet_capi_free_string(batch_lang);
}

static void test_logits(parakeet_ctx* ctx, const float* s, int n) {
    float* lp = NULL;
    int T = 0, V1 = 0;
    CHECK(parakeet_capi_transcribe_pcm_logits(ctx, s, n, 16000, &lp, &T, &V1) == 0);
    CHECK(lp && T > 0 && V1 > 1);
    if (lp) {
        double sum = 0;
        for (int v = 0; v < V1; ++v) sum += exp(lp[v]);
        CHECK(fabs(sum - 1.0) < 1e-4);
    }
    parakeet_capi_free_logits(lp);
}

static void test_stream(parakeet_ctx* ctx, const float* s, int n) {
    parakeet_stream* st = parakeet_capi_stream_begin(ctx);
    CHECK(st != NULL);
    if (!st) return;
    for (int i = 0; i < n; i += 1600) {
        int eou = -1;
        char* t = parakeet_capi_stream_feed(st, s + i, n - i < 1600 ? n - i : 1600, &eou);
        CHECK(t != NULL && eou == 0);
        parakeet_capi_free_string(t);
    }
    char* t = parakeet_capi_stream_finalize(st);
    CHECK(t != NULL);
    parakeet_capi_free_string(t);
    parakeet_stream_event* ev = NULL;
    CHECK(parakeet_capi_stream_drain_events(st, &ev) == 0);
    parakeet_capi_free_events(ev);
    parakeet_capi_stream_free(st);
    st = parakeet_capi_stream_begin_lang(ctx, "en");
    char* j = parakeet_capi_stream_feed_json(st, s, n);
    CHECK(contains(j, "\"eou\":0") && contains(j, "\"eob\":0") && contains(j, "\"events\":[]"));
    parakeet_capi_free_string(j);
    j = parakeet_capi_stream_finalize_json(st);
    CHECK(j != NULL);
    parakeet_capi_free_string(j);
    parakeet_capi_stream_free(st);
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s HYBRID.gguf WAV\n", argv[0]);
        return 2;
    }
    CHECK(parakeet_capi_abi_version() >= 6);
    CHECK(strlen(parakeet_version()) > 0);
    int n = 0;
    float* s = read_wav16(argv[2], &n);
    CHECK(s != NULL && n > 16000);
    parakeet_ctx* ctx = parakeet_capi_load(argv[1]);
    CHECK(ctx != NULL);
    if (ctx && s) {
        test_capi(ctx, argv[2], s, n);
        test_capi_timestamps(ctx, argv[2]);
        test_capi_batch_json(ctx, s, n);
        test_logits(ctx, s, n);
        test_stream(ctx, s, n);
    }
    char* text = NULL;
    CHECK(parakeet_transcribe_file(argv[1], argv[2], &text) == 0 && text != NULL);
    parakeet_free_string(text);
    parakeet_capi_free(ctx);
    parakeet_capi_shutdown();
    free(s);
    return report_checks();
}
