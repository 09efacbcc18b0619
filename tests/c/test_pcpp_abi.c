/*
 * A C program written against parakeet.cpp's C API as it publishes it, linked to this
 * library. It does not include parakeet_capi.h: the declarations below restate parakeet.cpp's
 * (its include/parakeet_capi.h: ABI 6 = the 0.2.2 wheel, and ABI 7's diarization, diarization
 * stream and speaker-attributed ASR calls), so a wrong signature or a missing symbol here fails
 * to link or to run. The checks are those its own C-ABI tests make (test_capi: load, transcribe
 * by path and PCM, errors; test_capi_timestamps: the JSON document's keys and word/token times;
 * test_capi_batch_json: a batch equals single calls), adapted to our fixture models, plus
 * LocalAI's mandatory symbol set (abi_version, load, free, transcribe_path,
 * transcribe_path_json, stream_begin/feed/finalize/free, free_string, last_error), all of which
 * must link. ABI 7: every one of its functions is found by dlsym in the running process (what a
 * program that probes the version and then binds by name relies on) and called: the offline
 * ones on a diarization model in parakeet.cpp's own GGUF schema, the streams on a streaming
 * checkpoint (the offline fixture normalises its mel per feature, which streams refuse).
 * The bundle calls of its ABI 8-10 (load_component, bundle_components_json, load_error) link
 * and behave on a plain file.
 *
 * ABI 8's sound tagger, sound stream and scene stream (with ABI 9's speaker fields) are
 * restated and called on the CED fixture (tests/data/ced); the speaker, registry and named calls
 * of ABI 9/10 in test_pcpp_speaker_abi.c. The program requires ABI 10.
 *
 * Usage: test_pcpp_abi HYBRID.gguf WAV SORTFORMER_PCPP.gguf SORTFORMER_STREAMING.gguf CONVERSATION.wav
 *        CED.gguf CED_CLIP.wav
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
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
/* ABI 7 */
typedef struct parakeet_diar_stream parakeet_diar_stream;
typedef struct parakeet_diar_segment {
    int speaker;
    float start;
    float end;
} parakeet_diar_segment;
typedef struct parakeet_sas_result {
    int speaker;
    char* text;
    float start;
    float end;
    float conf;
} parakeet_sas_result;
typedef struct parakeet_sas_stream parakeet_sas_stream;
char* parakeet_capi_diarize_path(parakeet_ctx* ctx, const char* wav_path);
char* parakeet_capi_diarize_pcm(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate);
parakeet_diar_stream* parakeet_capi_diarize_stream_begin(parakeet_ctx* diar_ctx);
parakeet_diar_stream* parakeet_capi_diarize_stream_begin_latency(parakeet_ctx* diar_ctx, int latency);
int parakeet_capi_diarize_stream_feed(parakeet_diar_stream* s, const float* pcm, int n_samples, int is_last,
                                      parakeet_diar_segment** out, int* n_out);
int parakeet_capi_diarize_stream_active(parakeet_diar_stream* s, parakeet_diar_segment** out, int* n_out);
int parakeet_capi_diarize_stream_chunk_samples(parakeet_diar_stream* s);
float parakeet_capi_diarize_stream_time(parakeet_diar_stream* s);
void parakeet_capi_diarize_stream_free(parakeet_diar_stream* s);
void parakeet_capi_free_diar_segments(parakeet_diar_segment* segs);
int parakeet_capi_transcribe_and_diarize(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx, const float* samples,
                                         int n_samples, int sample_rate, parakeet_sas_result** out, int* n_out);
char* parakeet_capi_transcribe_and_diarize_json(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx, const float* samples,
                                                int n_samples, int sample_rate);
void parakeet_capi_free_sas_results(parakeet_sas_result* results, int n);
parakeet_sas_stream* parakeet_capi_sas_stream_begin(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx);
parakeet_sas_stream* parakeet_capi_sas_stream_begin_latency(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx,
                                                            int latency);
int parakeet_capi_sas_stream_feed(parakeet_sas_stream* s, const float* pcm, int n_samples, int is_last,
                                  parakeet_sas_result** out, int* n_out);
void parakeet_capi_sas_stream_free(parakeet_sas_stream* s);
/* ABI 8's sound tagger and sound stream (its header, verbatim). */
typedef struct {
    int   size;                    // sizeof(parakeet_sound_opts), for versioning
    float window_sec, hop_sec;
    float on_threshold, off_threshold, min_duration_sec;
    int   top_k;                   // per-window scores kept for the drain
} parakeet_sound_opts;
void parakeet_capi_sound_opts_default(parakeet_sound_opts* o);
typedef struct {
    int         class_index;
    const char* label;             // borrowed from the tagger ctx
    float       start, end, peak;  // seconds from stream start
} parakeet_sound_segment;
typedef struct parakeet_sound_stream parakeet_sound_stream;
parakeet_sound_stream* parakeet_capi_sound_stream_begin(parakeet_ctx* tagger, const parakeet_sound_opts* o);
int   parakeet_capi_sound_stream_feed(parakeet_sound_stream* s, const float* pcm, int n,
                                      int is_last, parakeet_sound_segment** out, int* n_out);
int   parakeet_capi_sound_stream_active(parakeet_sound_stream* s, parakeet_sound_segment** out, int* n_out);
char* parakeet_capi_sound_stream_drain_scores_json(parakeet_sound_stream* s);
void  parakeet_capi_free_sound_segments(parakeet_sound_segment* segs);
void  parakeet_capi_sound_stream_free(parakeet_sound_stream* s);
int         parakeet_capi_num_classes(const parakeet_ctx* ctx);            // -1 if not a tagger
const char* parakeet_capi_class_label(const parakeet_ctx* ctx, int index); // NULL if not tagger/oob
int parakeet_capi_model_kind(const parakeet_ctx* ctx);
/* ABI 8's scene stream, with ABI 9's speaker fields and begin_speaker (its header, verbatim). */
typedef struct parakeet_speaker_registry parakeet_speaker_registry;
parakeet_speaker_registry* parakeet_capi_speaker_registry_new(void);
void parakeet_capi_speaker_registry_free(parakeet_speaker_registry* reg);
typedef struct {
    int size;                    // sizeof(parakeet_scene_opts), for versioning
    int diar_latency;            // PARAKEET_DIAR_LATENCY_*, used only with a diar ctx
    parakeet_sound_opts sound;   // used only with a tagger ctx
    int flags;                   // reserved, must be 0
    float speaker_accept_threshold;   // default 0.5
    float speaker_margin;             // default 0.05
    float speaker_min_voice_sec;      // default 2.0
    float speaker_refresh_sec;        // default 3.0
    float speaker_max_voice_sec;      // default 10.0
} parakeet_scene_opts;
void parakeet_capi_scene_opts_default(parakeet_scene_opts* o);
typedef struct parakeet_scene_stream parakeet_scene_stream;
parakeet_scene_stream* parakeet_capi_scene_stream_begin(parakeet_ctx* asr, parakeet_ctx* diar,
                                                         parakeet_ctx* tagger, const parakeet_scene_opts* o);
char* parakeet_capi_scene_stream_feed_json(parakeet_scene_stream* s, const float* pcm, int n, int is_last);
char* parakeet_capi_scene_stream_drain_scores_json(parakeet_scene_stream* s);   // "[]" without tagger
const char* parakeet_capi_scene_stream_last_error(parakeet_scene_stream* s);
void  parakeet_capi_scene_stream_free(parakeet_scene_stream* s);
parakeet_scene_stream* parakeet_capi_scene_stream_begin_speaker(parakeet_ctx* asr, parakeet_ctx* diar,
    parakeet_ctx* tagger, parakeet_ctx* speaker, parakeet_speaker_registry* registry, const parakeet_scene_opts* o);
/* ABI 8-10: the bundle calls (additive; docs/bundles.md) and what they report through */
const char* parakeet_capi_load_error(void);
parakeet_ctx* parakeet_capi_load_component(const char* gguf_path, const char* component);
char* parakeet_capi_bundle_components_json(const char* gguf_path);
/* ---- end of parakeet.cpp's declarations ---- */

/* ABI 7's functions (parakeet.cpp's v7: diarization, speaker-attributed ASR, the diarization
 * stream, with the latency calls it added at the same version). */
static const char* const ABI7_FUNCTIONS[] = {
    "parakeet_capi_diarize_path",
    "parakeet_capi_diarize_pcm",
    "parakeet_capi_diarize_stream_begin",
    "parakeet_capi_diarize_stream_begin_latency",
    "parakeet_capi_diarize_stream_feed",
    "parakeet_capi_diarize_stream_active",
    "parakeet_capi_diarize_stream_chunk_samples",
    "parakeet_capi_diarize_stream_time",
    "parakeet_capi_diarize_stream_free",
    "parakeet_capi_free_diar_segments",
    "parakeet_capi_transcribe_and_diarize",
    "parakeet_capi_transcribe_and_diarize_json",
    "parakeet_capi_free_sas_results",
    "parakeet_capi_sas_stream_begin",
    "parakeet_capi_sas_stream_begin_latency",
    "parakeet_capi_sas_stream_feed",
    "parakeet_capi_sas_stream_free",
};

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

/* Every ABI 7 function is a symbol of the process (the library linked in). */
static void test_abi7_symbols(void) {
    for (size_t i = 0; i < sizeof ABI7_FUNCTIONS / sizeof ABI7_FUNCTIONS[0]; ++i) {
        const int found = dlsym(RTLD_DEFAULT, ABI7_FUNCTIONS[i]) != NULL;
        if (!found) fprintf(stderr, "ABI 7 function not found: %s\n", ABI7_FUNCTIONS[i]);
        CHECK(found);
    }
}

/* ABI 7's calls, as parakeet.cpp's tests make them: the document's keys, a diarization stream
 * (latency, chunk size, time, the segments that end and those open), speaker-attributed ASR
 * offline (array and JSON agree) and streaming, and the errors it documents. */
static void test_abi7_calls(parakeet_ctx* asr, const char* diar_path, const char* stream_path, const char* wav) {
    parakeet_ctx* diar = parakeet_capi_load(diar_path);
    parakeet_ctx* live = parakeet_capi_load(stream_path);
    CHECK(diar != NULL && live != NULL);
    int n = 0;
    float* s = read_wav16(wav, &n);
    CHECK(s != NULL && n > 16000);
    if (!diar || !live || !s) {
        parakeet_capi_free(diar);
        parakeet_capi_free(live);
        free(s);
        return;
    }
    char* a = parakeet_capi_diarize_path(diar, wav);
    char* b = parakeet_capi_diarize_pcm(diar, s, n, 16000);
    CHECK(a && b && strcmp(a, b) == 0);
    CHECK(contains(a, "\"speakers\":") && contains(a, "\"segments\":[{\"speaker\":"));
    parakeet_capi_free_string(a);
    parakeet_capi_free_string(b);
    CHECK(parakeet_capi_diarize_pcm(asr, s, n, 16000) == NULL);
    CHECK(contains(parakeet_capi_last_error(asr), "diarize_* needs a diarization model"));
    CHECK(parakeet_capi_transcribe_pcm(diar, s, n, 16000, 0) == NULL);
    CHECK(contains(parakeet_capi_last_error(diar), "use parakeet_capi_diarize_"));

    CHECK(parakeet_capi_diarize_stream_begin_latency(live, 4) == NULL);
    CHECK(contains(parakeet_capi_last_error(live), "unknown diarization latency mode"));
    parakeet_diar_stream* ds = parakeet_capi_diarize_stream_begin_latency(live, 3);
    CHECK(ds != NULL);
    CHECK(parakeet_capi_diarize_stream_chunk_samples(ds) == (3 + 1) * 1280);
    int ended = 0;
    const int half = n / 2;
    parakeet_diar_segment* seg = NULL;
    int n_seg = 0;
    CHECK(parakeet_capi_diarize_stream_feed(ds, s, half, 0, &seg, &n_seg) == 0);
    ended += n_seg;
    parakeet_capi_free_diar_segments(seg);
    const float t = parakeet_capi_diarize_stream_time(ds);
    CHECK(t > 0.0f && t <= half / 16000.0f);
    CHECK(parakeet_capi_diarize_stream_active(ds, &seg, &n_seg) == 0);
    for (int i = 0; i < n_seg; ++i) CHECK(fabsf(seg[i].end - t) < 0.011f);
    parakeet_capi_free_diar_segments(seg);
    CHECK(parakeet_capi_diarize_stream_feed(ds, s + half, n - half, 1, &seg, &n_seg) == 0);
    ended += n_seg;
    for (int i = 0; i < n_seg; ++i) CHECK(seg[i].speaker >= 0 && seg[i].end > seg[i].start);
    parakeet_capi_free_diar_segments(seg);
    CHECK(ended > 0);
    CHECK(parakeet_capi_diarize_stream_feed(ds, s, 1, 0, NULL, NULL) == 1);
    CHECK(contains(parakeet_capi_last_error(live), "stream already finished"));
    parakeet_capi_diarize_stream_free(ds);
    ds = parakeet_capi_diarize_stream_begin(live);
    CHECK(ds != NULL && parakeet_capi_diarize_stream_chunk_samples(ds) > 0);
    CHECK(parakeet_capi_diarize_stream_feed(ds, NULL, 5, 0, NULL, NULL) == 1);
    CHECK(contains(parakeet_capi_last_error(live), "invalid samples buffer"));
    parakeet_capi_diarize_stream_free(ds);
    CHECK(parakeet_capi_diarize_stream_chunk_samples(NULL) == 0 && parakeet_capi_diarize_stream_time(NULL) == 0.0f);

    parakeet_sas_result* r = NULL;
    int n_r = 0;
    CHECK(parakeet_capi_transcribe_and_diarize(asr, diar, s, n, 16000, &r, &n_r) == 0);
    char* j = parakeet_capi_transcribe_and_diarize_json(asr, diar, s, n, 16000);
    CHECK(j && contains(j, "\"utterances\":[") && contains(j, "\"words\":["));
    CHECK(n_r > 0 && r != NULL);
    for (int i = 0; i < n_r; ++i) {
        CHECK(r[i].text != NULL && r[i].end >= r[i].start && r[i].speaker >= -1);
        CHECK(j && r[i].text && contains(j, r[i].text));
    }
    parakeet_capi_free_sas_results(r, n_r);
    parakeet_capi_free_string(j);
    CHECK(parakeet_capi_transcribe_and_diarize(diar, asr, s, n, 16000, &r, &n_r) == 1 && r == NULL && n_r == 0);

    CHECK(parakeet_capi_sas_stream_begin_latency(asr, live, -1) == NULL);
    parakeet_sas_stream* ss = parakeet_capi_sas_stream_begin_latency(asr, live, 1);
    CHECK(ss != NULL);
    int words_committed = 0;
    for (int off = 0; ss && off < n; off += 8000) {
        const int len = n - off < 8000 ? n - off : 8000;
        r = NULL;
        n_r = 0;
        CHECK(parakeet_capi_sas_stream_feed(ss, s + off, len, off + len == n, &r, &n_r) == 0);
        words_committed += n_r;
        parakeet_capi_free_sas_results(r, n_r);
    }
    CHECK(words_committed > 0);
    CHECK(ss && parakeet_capi_sas_stream_feed(ss, s, 1, 0, NULL, NULL) == 1);
    parakeet_capi_sas_stream_free(ss);
    ss = parakeet_capi_sas_stream_begin(asr, live);
    CHECK(ss != NULL);
    parakeet_capi_sas_stream_free(ss);
    parakeet_capi_sas_stream_free(NULL);
    parakeet_capi_free(live);
    parakeet_capi_free(diar);
    free(s);
}

/* The bundle calls on a plain model file (bundles themselves: tests/cpp/test_capi_bundle.cpp):
 * no component name loads it as parakeet_capi_load does, a name is refused, and it has no
 * components to list; parakeet_capi_load_error() is never NULL. */
static void test_bundle_calls(const char* model_path) {
    CHECK(parakeet_capi_load_error() != NULL);
    parakeet_ctx* ctx = parakeet_capi_load_component(model_path, NULL);
    CHECK(ctx != NULL && parakeet_capi_model_kind(ctx) == 1 && strcmp(parakeet_capi_load_error(), "") == 0);
    parakeet_capi_free(ctx);
    CHECK(parakeet_capi_load_component(model_path, "asr") == NULL);
    CHECK(strstr(parakeet_capi_load_error(), "is not a bundle, so it has no component 'asr'") != NULL);
    CHECK(parakeet_capi_bundle_components_json(model_path) == NULL);
    CHECK(parakeet_capi_load_component(NULL, "asr") == NULL && strcmp(parakeet_capi_load_error(), "model path is NULL") == 0);
}

/* ABI 8's sound calls on a CED tagger: kind 3, its labels, a stream fed a clip in two pieces,
 * the segments it closes and the drained window scores. */
static void test_abi8_sound(parakeet_ctx* asr, const char* ced_path, const char* clip) {
    parakeet_ctx* ced = parakeet_capi_load(ced_path);
    CHECK(ced != NULL && parakeet_capi_model_kind(ced) == 3);
    CHECK(parakeet_capi_num_classes(ced) == 10 && parakeet_capi_num_classes(asr) == -1);
    CHECK(parakeet_capi_class_label(ced, 3) && strcmp(parakeet_capi_class_label(ced, 3), "Doorbell") == 0);
    CHECK(parakeet_capi_class_label(ced, 10) == NULL && parakeet_capi_class_label(asr, 0) == NULL);
    CHECK(parakeet_capi_sound_stream_begin(asr, NULL) == NULL);
    parakeet_sound_opts o;
    parakeet_capi_sound_opts_default(&o);
    CHECK(o.size == (int)sizeof o && o.window_sec == 3.0f && o.hop_sec == 1.0f && o.top_k == 5);
    int n = 0;
    float* s = read_wav16(clip, &n);
    parakeet_sound_stream* st = ced && s ? parakeet_capi_sound_stream_begin(ced, &o) : NULL;
    CHECK(st != NULL);
    if (st) {
        parakeet_sound_segment* segs = NULL;
        int n_segs = -1;
        CHECK(parakeet_capi_sound_stream_feed(st, s, n / 2, 0, &segs, &n_segs) == 0 && n_segs == 0 && segs == NULL);
        CHECK(parakeet_capi_sound_stream_active(st, &segs, &n_segs) == 0 && n_segs > 0);
        parakeet_capi_free_sound_segments(segs);
        CHECK(parakeet_capi_sound_stream_feed(st, s + n / 2, n - n / 2, 1, &segs, &n_segs) == 0 && n_segs > 0);
        for (int i = 0; i < n_segs; ++i)
            CHECK(segs[i].label != NULL && segs[i].start >= 0.f && segs[i].end <= n / 16000.f + 1e-3f &&
                  segs[i].peak >= o.on_threshold);
        parakeet_capi_free_sound_segments(segs);
        char* json = parakeet_capi_sound_stream_drain_scores_json(st);
        CHECK(json != NULL && strncmp(json, "[{\"start\":0.000,\"end\":1.000,\"tags\":[{\"index\":", 44) == 0);
        parakeet_capi_free_string(json);
        CHECK(parakeet_capi_sound_stream_feed(st, s, 1, 0, &segs, &n_segs) == 1);
        CHECK(parakeet_capi_sound_stream_feed(NULL, s, 1, 0, &segs, &n_segs) == 1);
    }
    parakeet_capi_sound_stream_free(st);
    parakeet_capi_free(ced);
    free(s);
}

/* ABI 8's scene stream on ASR, the streaming diarizer and the CED tagger: the conversation fed in
 * two halves gives documents of parakeet.cpp's shape, words by the end, no names without a
 * speaker part; then the stream's own errors and begin_speaker's checks. */
static void test_abi8_scene(parakeet_ctx* asr, const char* stream_path, const char* ced_path, const char* wav) {
    parakeet_ctx* diar = parakeet_capi_load(stream_path);
    parakeet_ctx* ced = parakeet_capi_load(ced_path);
    parakeet_speaker_registry* reg = parakeet_capi_speaker_registry_new();
    int n = 0;
    float* s = read_wav16(wav, &n);
    parakeet_scene_opts o;
    parakeet_capi_scene_opts_default(&o);
    CHECK(o.size == (int)sizeof o && o.diar_latency == 0 && o.flags == 0 && o.sound.size == (int)sizeof o.sound &&
          o.speaker_accept_threshold == 0.5f && o.speaker_margin == 0.05f && o.speaker_min_voice_sec == 2.0f &&
          o.speaker_refresh_sec == 3.0f && o.speaker_max_voice_sec == 10.0f);
    o.diar_latency = 1; /* PARAKEET_DIAR_LATENCY_LOW */
    CHECK(parakeet_capi_scene_stream_begin(NULL, NULL, NULL, &o) == NULL);
    /* A speaker context without a diarizer is refused on it; a registry without one is ignored. */
    CHECK(parakeet_capi_scene_stream_begin_speaker(asr, NULL, NULL, ced, reg, &o) == NULL);
    CHECK(strcmp(parakeet_capi_last_error(ced), "speaker identification needs a diarization model") == 0);
    parakeet_scene_stream* st = diar && ced && s ? parakeet_capi_scene_stream_begin_speaker(asr, diar, ced, NULL, reg, &o) : NULL;
    CHECK(st != NULL);
    if (st) {
        char* first = parakeet_capi_scene_stream_feed_json(st, s, n / 2, 0);
        CHECK(first != NULL && strncmp(first, "{\"t\":", 5) == 0 && strstr(first, "\"names\"") == NULL &&
              strstr(first, "\"utterances\":[") && strstr(first, "\"active\":{\"speakers\":["));
        parakeet_capi_free_string(first);
        char* last = parakeet_capi_scene_stream_feed_json(st, s + n / 2, n - n / 2, 1);
        CHECK(last != NULL && strstr(last, "\"words\":[{\"text\":") != NULL);
        parakeet_capi_free_string(last);
        CHECK(strcmp(parakeet_capi_scene_stream_last_error(st), "") == 0);
        char* scores = parakeet_capi_scene_stream_drain_scores_json(st);
        CHECK(scores != NULL && strncmp(scores, "[{\"start\":0.000,\"end\":1.000,\"tags\":[", 36) == 0);
        parakeet_capi_free_string(scores);
        CHECK(parakeet_capi_scene_stream_feed_json(st, s, 1, 0) == NULL);
        CHECK(strcmp(parakeet_capi_scene_stream_last_error(st), "stream already finished") == 0);
    }
    parakeet_capi_scene_stream_free(st);
    parakeet_capi_speaker_registry_free(reg);
    parakeet_capi_free(ced);
    parakeet_capi_free(diar);
    free(s);
}

int main(int argc, char** argv) {
    if (argc != 8) {
        fprintf(stderr,
                "usage: %s HYBRID.gguf WAV SORTFORMER_PCPP.gguf SORTFORMER_STREAMING.gguf CONVERSATION.wav CED.gguf "
                "CED_CLIP.wav\n",
                argv[0]);
        return 2;
    }
    CHECK(parakeet_capi_abi_version() >= 10);
    test_abi7_symbols();
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
        test_abi7_calls(ctx, argv[3], argv[4], argv[5]);
        test_abi8_sound(ctx, argv[6], argv[7]);
        test_abi8_scene(ctx, argv[4], argv[6], argv[5]);
    }
    char* text = NULL;
    test_bundle_calls(argv[1]);
    CHECK(parakeet_transcribe_file(argv[1], argv[2], &text) == 0 && text != NULL);
    parakeet_free_string(text);
    parakeet_capi_free(ctx);
    parakeet_capi_shutdown();
    free(s);
    return report_checks();
}
