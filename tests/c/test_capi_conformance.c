/*
 * C-ABI conformance: compiled as C99 against the public header alone and linked only to the
 * shared library. Checks every documented contract of parakeet_capi.h: the ABI version, NULL
 * and bad-argument handling, who frees what, error strings (per context and per thread), that
 * the text and JSON results agree, progress reports and cancellation, the attention
 * setting, and the stream family.
 *
 * Usage: test_capi_conformance HYBRID.gguf RNNT.gguf OTHER_ARCH.gguf SCRATCH_DIR
 *   HYBRID.gguf: a hybrid TDT/RNN-T + CTC model; RNNT.gguf: a transducer-only model;
 *   OTHER_ARCH.gguf: a valid GGUF file that is not a parakeet model.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_checks.h"
#include "parakeet_capi.h"

#define CHECK_ERROR_MENTIONS(msg, needle)                                                \
    do {                                                                                 \
        const char* m_ = (msg);                                                          \
        ++g_checks;                                                                      \
        if (!contains(m_, needle)) {                                                     \
            ++g_failures;                                                                \
            fprintf(stderr, "%s:%d: error \"%s\" does not mention \"%s\"\n", __FILE__, __LINE__, \
                    m_ ? m_ : "(null)", needle);                                         \
        }                                                                                \
    } while (0)

/* A deterministic test signal: a few tones and noise, 16 kHz, in [-0.5, 0.5]. */
static float* make_signal(int n) {
    float* s = (float*)malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    uint32_t state = 12345u;
    for (int i = 0; i < n; ++i) {
        state = state * 1664525u + 1013904223u;
        const double noise = ((double)(state >> 8) / 16777216.0 - 0.5) * 0.1;
        s[i] = (float)(0.2 * sin(i * 0.05) + 0.15 * sin(i * 0.31) + noise);
    }
    return s;
}

static void put_u16(FILE* f, unsigned v) { fputc((int)(v & 255), f); fputc((int)(v >> 8), f); }
static void put_u32(FILE* f, unsigned long v) { put_u16(f, (unsigned)(v & 0xFFFF)); put_u16(f, (unsigned)(v >> 16)); }

/* Writes a mono WAV with the given format tag/bits; 16-bit PCM samples are quantised from s.
 * Returns 0 on success. */
static int write_wav(const char* path, unsigned format, unsigned bits, unsigned rate, const float* s, int n) {
    FILE* f = fopen(path, "wb");
    if (!f) return -1;
    const unsigned bytes = bits / 8;
    fwrite("RIFF", 1, 4, f);
    put_u32(f, 36 + (unsigned long)n * bytes);
    fwrite("WAVEfmt ", 1, 8, f);
    put_u32(f, 16);
    put_u16(f, format);
    put_u16(f, 1);
    put_u32(f, rate);
    put_u32(f, rate * bytes);
    put_u16(f, bytes);
    put_u16(f, bits);
    fwrite("data", 1, 4, f);
    put_u32(f, (unsigned long)n * bytes);
    for (int i = 0; i < n; ++i) {
        if (bits == 16) {
            long v = lrint(s[i] * 32767.0);
            put_u16(f, (unsigned)(v & 0xFFFF));
        } else {
            fputc(0x7F, f);
        }
    }
    fclose(f);
    return 0;
}

/* make_signal(n) quantised to 16 bits and written to <scratch>/<name> (mono, 16 kHz, PCM16),
 * whose path goes to `path`: the WAV file and the returned buffer hold the same samples. */
static float* make_wav_signal(int n, const char* scratch, const char* name, char* path, size_t path_size) {
    float* s = make_signal(n);
    for (int i = 0; i < n; ++i) s[i] = (float)lrint(s[i] * 32767.0) / 32768.0f;
    snprintf(path, path_size, "%s/%s", scratch, name);
    CHECK(write_wav(path, 1, 16, 16000, s, n) == 0);
    return s;
}

/* The value of "text" in a transcript JSON document (no escapes in our test outputs). */
static char* json_text(const char* json) {
    const char* p = strstr(json, "\"text\":\"");
    if (!p) return NULL;
    p += 8;
    const char* e = p;
    while (*e && !(*e == '"' && e[-1] != '\\')) ++e;
    char* out = (char*)malloc((size_t)(e - p) + 1);
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = '\0';
    return out;
}

/* What a progress callback saw: it cancels (returns 1) at the first fraction above
 * cancel_above (a value above 1 never cancels). */
struct progress_log {
    int calls;
    int monotone_violations;
    int out_of_range;
    float first;
    float last;
    float cancel_above;
};

static int record_progress(float fraction, void* user_data) {
    struct progress_log* log = (struct progress_log*)user_data;
    if (fraction < 0.0f || fraction > 1.0f) ++log->out_of_range;
    if (log->calls == 0) log->first = fraction;
    else if (fraction < log->last) ++log->monotone_violations;
    ++log->calls;
    log->last = fraction;
    return fraction > log->cancel_above;
}

static int cancel_at_once(float fraction, void* user_data) {
    (void)fraction;
    ++*(int*)user_data;
    return 1;
}

static void test_version(void) {
    CHECK(parakeet_capi_abi_version() == PARAKEET_CAPI_ABI_VERSION);
}

static void test_load_failures(const char* other_arch, const char* scratch) {
    CHECK(parakeet_capi_load(NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_load_error(), "NULL");

    CHECK(parakeet_capi_load("/nonexistent/model.gguf") == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_load_error(), "/nonexistent/model.gguf");

    CHECK(parakeet_capi_load(other_arch) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_load_error(), "parakeet");

    /* Not a GGUF at all. */
    char path[1024];
    snprintf(path, sizeof path, "%s/not_a_model.gguf", scratch);
    FILE* f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs("this is plainly not a GGUF file, just some text", f);
        fclose(f);
    }
    CHECK(parakeet_capi_load(path) == NULL);
    CHECK(strlen(parakeet_capi_load_error()) > 0);
}

static void test_truncated_model(const char* model, const char* scratch) {
    FILE* in = fopen(model, "rb");
    CHECK(in != NULL);
    if (!in) return;
    fseek(in, 0, SEEK_END);
    const long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    char* bytes = (char*)malloc((size_t)size);
    CHECK(fread(bytes, 1, (size_t)size, in) == (size_t)size);
    fclose(in);
    char path[1024];
    snprintf(path, sizeof path, "%s/truncated.gguf", scratch);
    /* The last cut lands inside the last tensor (past any alignment padding). */
    const long cuts[] = {3, 100, size / 2, size - 1024};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
        FILE* out = fopen(path, "wb");
        fwrite(bytes, 1, (size_t)cuts[i], out);
        fclose(out);
        CHECK(parakeet_capi_load(path) == NULL);
        CHECK(strlen(parakeet_capi_load_error()) > 0);
    }
    free(bytes);
}

static void test_null_handles(void) {
    parakeet_capi_free(NULL);        /* no-op */
    parakeet_capi_free_string(NULL); /* no-op */
    CHECK(strcmp(parakeet_capi_last_error(NULL), "context is NULL") == 0);
    float s[4] = {0};
    CHECK(parakeet_capi_transcribe_pcm(NULL, s, 4, 16000, 0) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    CHECK(parakeet_capi_transcribe_path_json(NULL, "x.wav", 0) == NULL);
    CHECK(parakeet_capi_model_info_json(NULL) == NULL);
    CHECK(parakeet_capi_set_concurrency(NULL, 2, 1) == -1);
    CHECK(parakeet_capi_pool_working_set_bytes(NULL) == -1);
    int eou = 7;
    parakeet_stream_event* events = (parakeet_stream_event*)&eou;
    CHECK(parakeet_capi_stream_begin(NULL) == NULL);
    CHECK(parakeet_capi_stream_begin_with(NULL, NULL) == NULL);
    CHECK(parakeet_capi_stream_feed(NULL, s, 4, &eou) == NULL && eou == 0);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    CHECK(parakeet_capi_stream_feed_json(NULL, s, 4) == NULL);
    CHECK(parakeet_capi_stream_finalize(NULL) == NULL);
    CHECK(parakeet_capi_stream_finalize_json(NULL) == NULL);
    CHECK(parakeet_capi_stream_drain_events(NULL, &events) == -1 && events == NULL);
    parakeet_capi_free_events(NULL); /* no-op */
    parakeet_capi_stream_free(NULL); /* no-op */
    CHECK(parakeet_capi_stream_group_new(NULL, 4, 10) == NULL);
    CHECK(parakeet_capi_stream_group_join(NULL, NULL) == 1);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    CHECK(parakeet_capi_stream_group_leave(NULL, NULL) == 1);
    CHECK(parakeet_capi_stream_group_size(NULL) == -1);
    CHECK(parakeet_capi_stream_group_stats_json(NULL) == NULL);
    parakeet_capi_stream_group_free(NULL); /* no-op */
    CHECK(parakeet_capi_vad_pcm_json(NULL, s, 4, 16000, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    CHECK(parakeet_capi_vad_path_json(NULL, "x.wav", NULL) == NULL);
    CHECK(parakeet_capi_vad_stream_begin(NULL, 16000, NULL) == NULL);
    CHECK(parakeet_capi_vad_stream_feed_json(NULL, s, 4, 0) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    CHECK(parakeet_capi_vad_stream_reset(NULL) == -1);
    parakeet_capi_vad_stream_free(NULL); /* no-op */
    CHECK(parakeet_capi_diarize_pcm(NULL, s, 4, 16000) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    CHECK(parakeet_capi_diarize_pcm_with(NULL, s, 4, 16000, "{}") == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    CHECK(parakeet_capi_diarize_path(NULL, "x.wav") == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    CHECK(parakeet_capi_transcribe_pcm_json_vad_with(NULL, NULL, s, 4, 16000, 0, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    CHECK(parakeet_capi_transcribe_path_json_vad_with(NULL, NULL, "x.wav", 0, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    {
        parakeet_sas_result* res = (parakeet_sas_result*)s; /* overwritten with NULL */
        int n_res = 7;
        CHECK(parakeet_capi_transcribe_and_diarize(NULL, NULL, s, 4, 16000, &res, &n_res) == 1);
        CHECK(res == NULL && n_res == 0);
        CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
        CHECK(parakeet_capi_transcribe_and_diarize_json(NULL, NULL, s, 4, 16000) == NULL);
        CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
        parakeet_capi_free_sas_results(NULL, 2); /* no-op */
        CHECK(parakeet_capi_sas_stream_begin(NULL, NULL) == NULL);
        CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
        CHECK(parakeet_capi_sas_stream_begin_latency(NULL, NULL, PARAKEET_DIAR_LATENCY_LOW) == NULL);
        res = (parakeet_sas_result*)s;
        n_res = 7;
        CHECK(parakeet_capi_sas_stream_feed(NULL, s, 4, 0, &res, &n_res) == 1 && res == NULL && n_res == 0);
        CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
        parakeet_capi_sas_stream_free(NULL); /* no-op */
    }
    {
        parakeet_diar_segment* segs = (parakeet_diar_segment*)&eou;
        int n_segs = -1;
        CHECK(parakeet_capi_diarize_stream_begin(NULL) == NULL);
        CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
        CHECK(parakeet_capi_diarize_stream_begin_latency(NULL, PARAKEET_DIAR_LATENCY_LOW) == NULL);
        CHECK(parakeet_capi_diarize_stream_feed(NULL, s, 4, 0, &segs, &n_segs) == 1 && segs == NULL &&
              n_segs == 0);
        CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
        segs = (parakeet_diar_segment*)&eou;
        n_segs = -1;
        CHECK(parakeet_capi_diarize_stream_active(NULL, &segs, &n_segs) == 1 && segs == NULL && n_segs == 0);
        CHECK(parakeet_capi_diarize_stream_chunk_samples(NULL) == 0);
        CHECK(parakeet_capi_diarize_stream_time(NULL) == 0.0f);
        parakeet_capi_diarize_stream_free(NULL); /* no-op */
        parakeet_capi_free_diar_segments(NULL); /* no-op */
    }
}

static void test_bad_audio(parakeet_ctx* ctx, const char* scratch) {
    float* s = make_signal(16000);
    /* VAD-cut transcription needs a Silero VAD context: not NULL (no VAD head), not an ASR one */
    CHECK(parakeet_capi_transcribe_pcm_json_vad_with(ctx, NULL, s, 16000, 16000, 0, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "vad_ctx is NULL");
    CHECK(parakeet_capi_transcribe_pcm_json_vad_with(ctx, ctx, s, 16000, 16000, 0, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "does not hold a Silero VAD model");
    CHECK(parakeet_capi_transcribe_path_json_vad_with(ctx, ctx, "/nonexistent.wav", 0, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "does not hold a Silero VAD model");
    CHECK(parakeet_capi_transcribe_pcm(ctx, NULL, 100, 16000, 0) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "NULL");
    CHECK(parakeet_capi_transcribe_pcm(ctx, s, -1, 16000, 0) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "negative");
    CHECK(parakeet_capi_transcribe_pcm(ctx, s, 100, 0, 0) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "sample rate");
    CHECK(parakeet_capi_transcribe_pcm(ctx, s, 100, 16000, 7) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "decoder");
    s[500] = NAN;
    CHECK(parakeet_capi_transcribe_pcm(ctx, s, 16000, 16000, 0) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "NaN");
    s[500] = INFINITY;
    CHECK(parakeet_capi_transcribe_pcm_json(ctx, s, 16000, 16000, 0) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "finite");
    s[500] = 0.0f;

    /* Long audio is accepted: 1201 s (beyond the cap ABI version 1 had) passes the checks and
     * the front end; the request is then cancelled to keep the suite quick (the whole run of
     * an hour is tests/cpp/test_capi_long_audio.cpp). */
    const int n_long = 1201 * 1000;
    float* long_audio = make_signal(n_long);
    struct progress_log log = {0};
    log.cancel_above = 0.0f;
    CHECK(parakeet_capi_transcribe_pcm_json_progress(ctx, long_audio, n_long, 1000, 0, record_progress, &log) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "cancelled by the progress callback");
    CHECK(log.calls == 2 && log.last > 0.0f);
    free(long_audio);

    char path[1024];
    CHECK(parakeet_capi_transcribe_path(ctx, NULL, 0) == NULL);
    CHECK(parakeet_capi_transcribe_path(ctx, "/nonexistent/clip.wav", 0) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "/nonexistent/clip.wav");
    snprintf(path, sizeof path, "%s/mulaw.wav", scratch);
    CHECK(write_wav(path, 7, 8, 8000, s, 800) == 0);
    CHECK(parakeet_capi_transcribe_path_json(ctx, path, 0) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "not PCM");
    snprintf(path, sizeof path, "%s/rate500.wav", scratch);
    CHECK(write_wav(path, 1, 16, 500, s, 800) == 0);
    CHECK(parakeet_capi_transcribe_path(ctx, path, 0) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "sample rate");
    free(s);
}

static void test_success_clears_errors(parakeet_ctx* ctx) {
    float s[16] = {0};
    CHECK(parakeet_capi_transcribe_pcm(ctx, s, -5, 16000, 0) == NULL);
    CHECK(strlen(parakeet_capi_last_error(ctx)) > 0);
    char* text = parakeet_capi_transcribe_pcm(ctx, s, 16, 16000, 0);
    CHECK(text != NULL);
    CHECK(strcmp(parakeet_capi_last_error(ctx), "") == 0);
    CHECK(strcmp(parakeet_capi_thread_last_error(), "") == 0);
    parakeet_capi_free_string(text);
}

static void test_results(parakeet_ctx* ctx, const char* scratch) {
    const int n = 16000 * 2;
    char path[1024];
    float* s = make_wav_signal(n, scratch, "signal.wav", path, sizeof path);

    for (int decoder = 0; decoder <= 2; ++decoder) {
        char* text = parakeet_capi_transcribe_pcm(ctx, s, n, 16000, decoder);
        char* json = parakeet_capi_transcribe_pcm_json(ctx, s, n, 16000, decoder);
        char* path_text = parakeet_capi_transcribe_path(ctx, path, decoder);
        char* path_json = parakeet_capi_transcribe_path_json(ctx, path, decoder);
        CHECK(text && json && path_text && path_json);
        if (text && json && path_text && path_json) {
            char* from_json = json_text(json);
            CHECK(from_json && strcmp(from_json, text) == 0);
            free(from_json);
            CHECK(strcmp(text, path_text) == 0);
            CHECK(strcmp(json, path_json) == 0);
            CHECK(contains(json, "\"frame_sec\":0.0800"));
            CHECK(contains(json, "\"words\":["));
            CHECK(contains(json, "\"tokens\":["));
        }
        /* Repeating a call gives the same bytes. */
        char* again = parakeet_capi_transcribe_pcm_json(ctx, s, n, 16000, decoder);
        CHECK(again && json && strcmp(again, json) == 0);
        parakeet_capi_free_string(again);
        parakeet_capi_free_string(text);
        parakeet_capi_free_string(json);
        parakeet_capi_free_string(path_text);
        parakeet_capi_free_string(path_json);
    }

    /* Zero samples: an empty transcript, not an error. */
    char* empty = parakeet_capi_transcribe_pcm_json(ctx, s, 0, 16000, 0);
    CHECK(empty != NULL && contains(empty, "\"text\":\"\""));
    parakeet_capi_free_string(empty);

    /* Another sample rate is resampled, not refused. */
    char* resampled = parakeet_capi_transcribe_pcm(ctx, s, n, 22050, 0);
    CHECK(resampled != NULL);
    parakeet_capi_free_string(resampled);
    free(s);
}

/* Streams: the fed texts add up to the finalized transcript whatever the feed sizes, the JSON
 * documents carry their keys, bad options and bad audio are errors on the stream's context,
 * and a finalized stream refuses more audio. */
static char* stream_text(parakeet_ctx* ctx, const float* s, int n, int block, const char* options) {
    parakeet_stream* st = parakeet_capi_stream_begin_with(ctx, options);
    CHECK(st != NULL);
    if (st == NULL) return NULL;
    size_t cap = 1, len = 0;
    char* all = (char*)calloc(1, 1);
    for (int i = 0; i <= n; i += block) {
        const int m = i + block <= n ? block : n - i;
        int eou = -1;
        char* piece = i < n ? parakeet_capi_stream_feed(st, s + i, m, &eou) : parakeet_capi_stream_finalize(st);
        CHECK(piece != NULL);
        if (i < n) CHECK(eou == 0); /* offline models have no <EOU> */
        if (piece == NULL) break;
        const size_t k = strlen(piece);
        if (len + k + 1 > cap) {
            cap = 2 * (len + k + 1);
            all = (char*)realloc(all, cap);
        }
        memcpy(all + len, piece, k + 1);
        len += k;
        parakeet_capi_free_string(piece);
        if (i >= n) break;
        if (i + block > n) i = n - block; /* the next round finalizes */
    }
    parakeet_stream_event* events = NULL;
    CHECK(parakeet_capi_stream_drain_events(st, &events) == 0 && events == NULL);
    parakeet_capi_stream_free(st);
    return all;
}

static void test_streams(parakeet_ctx* ctx) {
    const int n = 16000 * 7 + 321;
    float* s = make_signal(n);
    const char* options = "{\"chunk_sec\": 1, \"left_sec\": 2, \"right_sec\": 0.5}";
    char* whole = stream_text(ctx, s, n, n, options);
    char* pieces = stream_text(ctx, s, n, 4799, options);
    char* ctc = stream_text(ctx, s, n, 16000, "{\"chunk_sec\": 1, \"decoder\": 1}");
    CHECK(whole && pieces && ctc && strcmp(whole, pieces) == 0);
    free(whole);
    free(pieces);
    free(ctc);

    parakeet_stream* st = parakeet_capi_stream_begin(ctx);
    CHECK(st != NULL);
    char* doc = parakeet_capi_stream_feed_json(st, s, n);
    CHECK(doc && contains(doc, "\"partial\":") && contains(doc, "\"words\":[") && contains(doc, "\"events\":[]") &&
          contains(doc, "\"frame_sec\":0.080000") && contains(doc, "\"finalized\":false"));
    parakeet_capi_free_string(doc);
    doc = parakeet_capi_stream_finalize_json(st);
    CHECK(doc && contains(doc, "\"finalized\":true"));
    parakeet_capi_free_string(doc);
    CHECK(parakeet_capi_stream_feed(st, s, 10, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "finalized");
    CHECK(parakeet_capi_stream_finalize(st) == NULL);
    parakeet_capi_stream_free(st);

    CHECK(parakeet_capi_stream_begin_with(ctx, "{\"chunk\": 2}") == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "unknown key");
    CHECK(parakeet_capi_stream_begin_with(ctx, "{\"chunk_sec\": 0.01}") == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "encoder frame");
    CHECK(parakeet_capi_stream_begin_with(ctx, "{\"decoder\": 5}") == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "decoder");
    CHECK(parakeet_capi_stream_begin_with(ctx, "{\"chunk_sec\": 2,}") == NULL);
    CHECK(parakeet_capi_stream_begin_with(ctx, "[1]") == NULL);
    st = parakeet_capi_stream_begin_with(ctx, "  ");
    CHECK(st != NULL);
    s[100] = NAN;
    CHECK(parakeet_capi_stream_feed(st, s, 200, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "finite");
    CHECK(parakeet_capi_stream_feed(st, NULL, 5, NULL) == NULL);
    char* ok = parakeet_capi_stream_feed(st, s, 50, NULL); /* still usable */
    CHECK(ok != NULL && strcmp(parakeet_capi_last_error(ctx), "") == 0);
    parakeet_capi_free_string(ok);
    parakeet_capi_stream_free(st); /* unfinalized: freed all the same */
    free(s);
}

/* Hotwords: compiling, the graph's size, score 0 = plain greedy, the JSON's "context" object,
 * path == pcm, the refusals, and a graph outliving its context. */
static void test_hotwords(parakeet_ctx* ctx, const char* scratch, const char* rnnt_model) {
    const int n = 16000 * 2;
    char path[1024];
    float* s = make_wav_signal(n, scratch, "hotwords.wav", path, sizeof path);

    const char* phrases[2] = {"garden", "garden gate"};
    parakeet_context_graph* zero = parakeet_capi_context_create_text(ctx, phrases, NULL, 2, 0.0f);
    CHECK(zero != NULL);
    int states = -1, arcs = -1, count = -1;
    double ms = -1;
    parakeet_capi_context_info(zero, &states, &arcs, &count, &ms);
    CHECK(count == 2 && states > 1 && arcs >= states - 1 && ms >= 0);
    parakeet_capi_context_info(NULL, &states, NULL, NULL, NULL); /* NULL graph: untouched */
    CHECK(count == 2);

    char* plain = parakeet_capi_transcribe_pcm_json(ctx, s, n, 16000, PARAKEET_DECODER_DEFAULT);
    char* biased0 = parakeet_capi_transcribe_pcm_contextual_json(ctx, s, n, 16000, zero, 0, NULL);
    char* from_path = parakeet_capi_transcribe_path_contextual_json(ctx, path, zero, 8, "en");
    CHECK(plain && biased0 && from_path);
    if (plain && biased0 && from_path) {
        char* t_plain = json_text(plain);
        char* t_zero = json_text(biased0);
        CHECK(t_plain && t_zero && strcmp(t_plain, t_zero) == 0);
        CHECK(contains(biased0, "\"context\":{") && contains(biased0, "\"completed_phrases\":"));
        CHECK(strcmp(biased0, from_path) == 0);
        free(t_plain);
        free(t_zero);
    }
    parakeet_capi_free_string(plain);
    parakeet_capi_free_string(biased0);
    parakeet_capi_free_string(from_path);

    const char* empty[1] = {""};
    CHECK(parakeet_capi_context_create_text(ctx, empty, NULL, 1, 1.0f) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "empty");
    CHECK(parakeet_capi_context_create_text(ctx, NULL, NULL, 0, 1.0f) == NULL);
    const float bad_weight[2] = {1.0f, -1.0f};
    CHECK(parakeet_capi_context_create_text(ctx, phrases, bad_weight, 2, 1.0f) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "weight");
    CHECK(parakeet_capi_context_create_text(ctx, phrases, NULL, 2, NAN) == NULL);
    const int32_t ids0[2] = {1, 2}, huge[1] = {1 << 30};
    const int32_t* ids[2] = {ids0, huge};
    const int lens[2] = {2, 1};
    parakeet_context_graph* by_ids = parakeet_capi_context_create_tokens(ctx, ids, lens, NULL, 1, 1.0f);
    CHECK(by_ids != NULL);
    CHECK(parakeet_capi_context_create_tokens(ctx, ids, lens, NULL, 2, 1.0f) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "outside the vocabulary");
    CHECK(parakeet_capi_transcribe_pcm_contextual_json(ctx, s, n, 16000, NULL, 8, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "NULL");

    /* An RNN-T-only model is refused; the graph outlives the context it was built on. */
    parakeet_ctx* rnnt = parakeet_capi_load(rnnt_model);
    CHECK(rnnt != NULL);
    parakeet_context_graph* from_rnnt = rnnt ? parakeet_capi_context_create_text(rnnt, phrases, NULL, 1, 1.0f) : NULL;
    CHECK(parakeet_capi_transcribe_pcm_contextual_json(rnnt, s, n, 16000, by_ids, 8, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(rnnt), "TDT or CTC");
    parakeet_capi_free(rnnt);
    parakeet_capi_context_info(from_rnnt, &states, NULL, &count, NULL);
    CHECK(count == 1);
    parakeet_capi_context_free(from_rnnt);
    parakeet_capi_context_free(by_ids);
    parakeet_capi_context_free(zero);
    parakeet_capi_context_free(NULL);
    free(s);
}

static void test_model_info(parakeet_ctx* ctx) {
    char* info = parakeet_capi_model_info_json(ctx);
    CHECK(info != NULL);
    CHECK(contains(info, "\"arch\":\"hybrid_"));
    CHECK(contains(info, "\"vocab_size\":"));
    CHECK(contains(info, "\"has_ctc\":true"));
    CHECK(contains(info, "\"attention\":{\"mode\":"));
    CHECK(contains(info, "\"auto_full_max_frames\":"));
    CHECK(contains(info, "\"isa\":\"scalar\"") || contains(info, "\"isa\":\"avx2\"") ||
          contains(info, "\"isa\":\"avx512\"") || contains(info, "\"isa\":\"neon\"") ||
          contains(info, "\"isa\":\"dotprod\"") || contains(info, "\"isa\":\"i8mm\""));
    CHECK(!contains(info, ",,") && !contains(info, "{,"));
    parakeet_capi_free_string(info);
}

static void test_concurrency_settings(parakeet_ctx* ctx) {
    CHECK(parakeet_capi_set_concurrency(ctx, 0, 0) == 1);
    CHECK(parakeet_capi_set_concurrency(ctx, 1, 4) == 1);
    CHECK(parakeet_capi_pool_working_set_bytes(ctx) == 0);
    CHECK(parakeet_capi_set_concurrency(ctx, -3, -3) == 1);
    CHECK(parakeet_capi_set_concurrency(ctx, 2, 1) == 2);
    float* s = make_signal(8000);
    char* text = parakeet_capi_transcribe_pcm(ctx, s, 8000, 16000, 0);
    CHECK(text != NULL);
    parakeet_capi_free_string(text);
    CHECK(parakeet_capi_pool_working_set_bytes(ctx) > 0);
    CHECK(parakeet_capi_set_concurrency(ctx, 100000, 1) == 64);
    CHECK(parakeet_capi_set_concurrency(ctx, 1, 0) == 1);
    CHECK(parakeet_capi_set_threads(2) == 2);
    CHECK(parakeet_capi_set_threads(0) >= 1);
    free(s);
}

static void test_missing_head(const char* rnnt_model) {
    parakeet_ctx* ctx = parakeet_capi_load(rnnt_model);
    CHECK(ctx != NULL);
    if (!ctx) return;
    float s[1600] = {0};
    CHECK(parakeet_capi_transcribe_pcm(ctx, s, 1600, 16000, 1) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "no CTC head");
    char* ok = parakeet_capi_transcribe_pcm(ctx, s, 1600, 16000, 2);
    CHECK(ok != NULL);
    parakeet_capi_free_string(ok);
    parakeet_capi_free(ctx);
}

static void test_progress_and_cancel(parakeet_ctx* ctx, const char* scratch) {
    const int n = 16000 * 3;
    char path[1024];
    float* s = make_wav_signal(n, scratch, "progress.wav", path, sizeof path);
    char* plain = parakeet_capi_transcribe_pcm_json(ctx, s, n, 16000, 0);
    CHECK(plain != NULL);

    /* Without a callback: the plain function's result. */
    char* no_fn = parakeet_capi_transcribe_pcm_json_progress(ctx, s, n, 16000, 0, NULL, NULL);
    CHECK(plain && no_fn && strcmp(plain, no_fn) == 0);
    parakeet_capi_free_string(no_fn);

    /* Monotone, within [0, 1], from 0 to exactly 1, many reports; the same transcript. */
    struct progress_log log = {0};
    log.cancel_above = 2.0f;
    char* with_fn = parakeet_capi_transcribe_pcm_json_progress(ctx, s, n, 16000, 0, record_progress, &log);
    CHECK(plain && with_fn && strcmp(plain, with_fn) == 0);
    CHECK(log.calls >= 4);
    CHECK(log.monotone_violations == 0 && log.out_of_range == 0);
    CHECK(log.first == 0.0f && log.last == 1.0f);
    parakeet_capi_free_string(with_fn);

    struct progress_log path_log = {0};
    path_log.cancel_above = 2.0f;
    char* from_path = parakeet_capi_transcribe_path_json_progress(ctx, path, 0, record_progress, &path_log);
    CHECK(plain && from_path && strcmp(plain, from_path) == 0);
    CHECK(path_log.calls == log.calls && path_log.last == 1.0f);
    parakeet_capi_free_string(from_path);

    /* Cancel at the first report: NULL, the documented message, no further calls. */
    int calls = 0;
    CHECK(parakeet_capi_transcribe_pcm_json_progress(ctx, s, n, 16000, 0, cancel_at_once, &calls) == NULL);
    CHECK(calls == 1);
    CHECK(strcmp(parakeet_capi_thread_last_error(), "cancelled by the progress callback") == 0);
    CHECK(strcmp(parakeet_capi_last_error(ctx), "cancelled by the progress callback") == 0);
    calls = 0;
    CHECK(parakeet_capi_transcribe_path_json_progress(ctx, path, 0, cancel_at_once, &calls) == NULL);
    CHECK(calls == 1);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "cancelled");

    /* Cancel half-way: the callback is not called again after it said stop. */
    struct progress_log mid = {0};
    mid.cancel_above = 0.5f;
    CHECK(parakeet_capi_transcribe_pcm_json_progress(ctx, s, n, 16000, 0, record_progress, &mid) == NULL);
    CHECK(mid.last > 0.5f && mid.last < 1.0f && mid.monotone_violations == 0);
    CHECK(mid.calls > 2 && mid.calls < log.calls);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "cancelled by the progress callback");

    /* The backend was given back: the next request runs (a leaked lease would hang here). */
    char* after = parakeet_capi_transcribe_pcm_json(ctx, s, n, 16000, 0);
    CHECK(plain && after && strcmp(plain, after) == 0);
    CHECK(strcmp(parakeet_capi_last_error(ctx), "") == 0);
    parakeet_capi_free_string(after);

    /* Errors before any work still come back as errors, with the callback given. */
    CHECK(parakeet_capi_transcribe_pcm_json_progress(NULL, s, n, 16000, 0, record_progress, &log) == NULL);
    CHECK(parakeet_capi_transcribe_pcm_json_progress(ctx, s, n, 16000, 9, record_progress, &log) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "decoder");
    parakeet_capi_free_string(plain);
    free(s);
}

/* Transcribes 2 s of the test signal and returns its JSON (NULL on error). */
static char* transcribe_signal(parakeet_ctx* ctx) {
    float* s = make_signal(32000);
    char* json = parakeet_capi_transcribe_pcm_json(ctx, s, 32000, 16000, 0);
    free(s);
    return json;
}


/* Sets (left, right) on ctx and checks that the call succeeds, that model info reports the
 * setting as `expect` and that a short clip then runs with it (an explicit setting applies at
 * any length). */
static void check_attention_setting(parakeet_ctx* ctx, int left, int right, const char* expect) {
    CHECK(parakeet_capi_set_attention_context(ctx, left, right) == 0);
    CHECK(strcmp(parakeet_capi_last_error(ctx), "") == 0);
    char* info = parakeet_capi_model_info_json(ctx);
    CHECK(contains(info, expect));
    parakeet_capi_free_string(info);
    char* json = transcribe_signal(ctx);
    CHECK(contains(json, expect));
    parakeet_capi_free_string(json);
}
static void test_attention_setting(parakeet_ctx* ctx) {
    CHECK(parakeet_capi_set_attention_context(NULL, 0, 0) != 0);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "NULL");
    const int bad[][2] = {{0, 5}, {5, 0}, {-1, 3}, {3, -1}, {-2, -2}, {-1, 0}, {0, -1}, {-5, 5}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        CHECK(parakeet_capi_set_attention_context(ctx, bad[i][0], bad[i][1]) != 0);
        CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "attention");
        CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "attention");
    }
    char* info = parakeet_capi_model_info_json(ctx);
    CHECK(contains(info, "\"attention\":{\"mode\":\"auto\"}")); /* a bad pair changed nothing */
    parakeet_capi_free_string(info);

    /* Auto on a short clip runs full attention. */
    char* json = transcribe_signal(ctx);
    CHECK(contains(json, "\"attention\":{\"mode\":\"full\"}"));
    parakeet_capi_free_string(json);

    check_attention_setting(ctx, -1, -1, "\"attention\":{\"mode\":\"full\"}");
    check_attention_setting(ctx, 16, 8, "\"attention\":{\"mode\":\"local\",\"left\":16,\"right\":8}");

    CHECK(parakeet_capi_set_attention_context(ctx, 0, 0) == 0);
    info = parakeet_capi_model_info_json(ctx);
    CHECK(contains(info, "\"attention\":{\"mode\":\"auto\"}"));
    parakeet_capi_free_string(info);
}

/* tests/data/nemo/ctc/model.gguf, from HYBRID's path tests/data/nemo/<model>/model.gguf. */
static const char* ctc_fixture_next_to(const char* model) {
    static char path[1024];
    snprintf(path, sizeof path, "%s", model);
    char* slash = strrchr(path, '/');
    if (slash) *slash = '\0';
    slash = strrchr(path, '/');
    if (slash) *slash = '\0';
    snprintf(path + strlen(path), sizeof path - strlen(path), "/ctc/model.gguf");
    return path;
}

/* N-best (beam search): the document's keys, path == pcm, nbest a prefix of a longer list,
 * target_lang ignored, repeatable bytes, RNN-T searched too, and clear errors for bad beam
 * options, NULL arguments and a CTC-only model (ctc_model: the ctc fixture next to HYBRID). */
static int count_of(const char* haystack, const char* needle) {
    int n = 0;
    for (const char* p = haystack ? strstr(haystack, needle) : NULL; p; p = strstr(p + 1, needle)) ++n;
    return n;
}

static void test_nbest(parakeet_ctx* ctx, const char* rnnt_model, const char* ctc_model, const char* scratch) {
    const int n = 16000;
    char path[1024];
    float* s = make_wav_signal(n, scratch, "nbest.wav", path, sizeof path);

    char* four = parakeet_capi_transcribe_pcm_nbest_json(ctx, s, n, 16000, 4, 4, 1, NULL);
    CHECK(four != NULL);
    CHECK(contains(four, "{\"beam_size\":4,\"score_norm\":true,\"frame_sec\":0.080000,"));
    CHECK(contains(four, "\"hypotheses\":[{\"text\":"));
    CHECK(count_of(four, "\"normalized_score\":") >= 1 && count_of(four, "\"normalized_score\":") <= 4);
    char* from_path = parakeet_capi_transcribe_path_nbest_json(ctx, path, 4, 4, 1, "xx");
    CHECK(four && from_path && strcmp(four, from_path) == 0);
    char* again = parakeet_capi_transcribe_pcm_nbest_json(ctx, s, n, 16000, 4, 4, 1, "en");
    CHECK(four && again && strcmp(four, again) == 0);
    char* one = parakeet_capi_transcribe_pcm_nbest_json(ctx, s, n, 16000, 4, 1, 1, NULL);
    CHECK(one && count_of(one, "\"normalized_score\":") == 1);
    if (one && four) {
        /* the best hypothesis is the same, so its text is too */
        const char* h1 = strstr(one, "\"hypotheses\":");
        const char* h4 = strstr(four, "\"hypotheses\":");
        const char* end = h1 ? strstr(h1, "\"words\":") : NULL;
        CHECK(h1 && h4 && end && strncmp(h1, h4, (size_t)(end - h1)) == 0);
    }
    char* raw = parakeet_capi_transcribe_pcm_nbest_json(ctx, s, n, 16000, 2, 2, 0, NULL);
    CHECK(raw && contains(raw, "\"score_norm\":false") && contains(raw, "\"duration_frames\":"));

    /* With a progress callback: the same document, reports up to exactly 1; a stop asked
     * during the search (past the encoder's share of the progress, 0.94) cancels it. */
    struct progress_log plog = {0};
    plog.cancel_above = 2.0f;
    char* with_fn = parakeet_capi_transcribe_pcm_nbest_json_progress(ctx, s, n, 16000, 4, 4, 1, record_progress, &plog);
    CHECK(four && with_fn && strcmp(four, with_fn) == 0);
    CHECK(plog.calls >= 4 && plog.monotone_violations == 0 && plog.first == 0.0f && plog.last == 1.0f);
    parakeet_capi_free_string(with_fn);
    struct progress_log stop = {0};
    stop.cancel_above = 0.95f;
    CHECK(parakeet_capi_transcribe_pcm_nbest_json_progress(ctx, s, n, 16000, 4, 4, 1, record_progress, &stop) == NULL);
    CHECK(stop.last > 0.95f && stop.last < 1.0f);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "cancelled by the progress callback");
    char* no_fn = parakeet_capi_transcribe_pcm_nbest_json_progress(ctx, s, n, 16000, 4, 4, 1, NULL, NULL);
    CHECK(four && no_fn && strcmp(four, no_fn) == 0);
    parakeet_capi_free_string(no_fn);

    CHECK(parakeet_capi_transcribe_pcm_nbest_json(ctx, s, n, 16000, 2, 3, 1, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "beam_size >= nbest >= 1");
    CHECK(parakeet_capi_transcribe_pcm_nbest_json(ctx, s, n, 16000, 0, 0, 1, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "beam_size >= nbest >= 1");
    CHECK(parakeet_capi_transcribe_path_nbest_json(ctx, path, 1, 0, 1, NULL) == NULL);
    CHECK(parakeet_capi_transcribe_path_nbest_json(ctx, NULL, 2, 1, 1, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctx), "NULL");
    CHECK(parakeet_capi_transcribe_pcm_nbest_json(ctx, NULL, n, 16000, 2, 1, 1, NULL) == NULL);
    CHECK(parakeet_capi_transcribe_pcm_nbest_json(NULL, s, n, 16000, 2, 1, 1, NULL) == NULL);
    CHECK_ERROR_MENTIONS(parakeet_capi_thread_last_error(), "context is NULL");

    parakeet_ctx* rnnt = parakeet_capi_load(rnnt_model);
    CHECK(rnnt != NULL);
    if (rnnt) {
        char* r = parakeet_capi_transcribe_pcm_nbest_json(rnnt, s, n, 16000, 2, 2, 1, NULL);
        CHECK(r && contains(r, "\"hypotheses\":[{"));
        parakeet_capi_free_string(r);
        parakeet_capi_free(rnnt);
    }
    parakeet_ctx* ctc = parakeet_capi_load(ctc_model);
    CHECK(ctc != NULL);
    if (ctc) {
        CHECK(parakeet_capi_transcribe_pcm_nbest_json(ctc, s, n, 16000, 2, 1, 1, NULL) == NULL);
        CHECK_ERROR_MENTIONS(parakeet_capi_last_error(ctc), "requires a TDT or RNN-T head");
        parakeet_capi_free(ctc);
    }
    parakeet_capi_free_string(four);
    parakeet_capi_free_string(from_path);
    parakeet_capi_free_string(again);
    parakeet_capi_free_string(one);
    parakeet_capi_free_string(raw);
    free(s);
}

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s HYBRID.gguf RNNT.gguf OTHER_ARCH.gguf SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    test_version();
    test_null_handles();
    test_load_failures(argv[3], argv[4]);
    test_truncated_model(argv[1], argv[4]);
    parakeet_ctx* ctx = parakeet_capi_load(argv[1]);
    CHECK(ctx != NULL);
    CHECK(strcmp(parakeet_capi_load_error(), "") == 0);
    if (ctx) {
        test_model_info(ctx);
        test_bad_audio(ctx, argv[4]);
        test_success_clears_errors(ctx);
        test_results(ctx, argv[4]);
        test_progress_and_cancel(ctx, argv[4]);
        test_attention_setting(ctx);
        test_streams(ctx);
        test_hotwords(ctx, argv[4], argv[2]);
        test_concurrency_settings(ctx);
        test_nbest(ctx, argv[2], ctc_fixture_next_to(argv[1]), argv[4]);
        parakeet_capi_free(ctx);
    }
    test_missing_head(argv[2]);
    return report_checks();
}
