/*
 * parakeet — the C ABI of libparakeet.
 *
 * This header is the library's only public interface. It is plain C (C99) and the function
 * names and signatures follow the parakeet.cpp C API for the functions both provide, so code
 * written against that API links against this library unchanged.
 *
 * Conventions (they hold for every function below unless its comment says otherwise):
 *  - Nothing throws across this boundary, and no function aborts the process on bad input.
 *  - Failure is reported by the return value: NULL for pointer results, non-zero (or a
 *    negative count) for integer results. The reason is then available as a message:
 *      * parakeet_capi_load_error()          for parakeet_capi_load (thread-local);
 *      * parakeet_capi_thread_last_error()   for any call, exact for the calling thread;
 *      * parakeet_capi_last_error(ctx)       the most recent call that finished on ctx.
 *  - Strings returned as `char*` are allocated by the library, NUL-terminated UTF-8, owned
 *    by the caller, and must be released with parakeet_capi_free_string(). Strings returned
 *    as `const char*` are owned by the library (see each function for how long they live).
 *  - A parakeet_ctx may be used from several threads at once. By default requests on one
 *    context run one at a time (they queue); see parakeet_capi_set_concurrency().
 *  - Audio is mono PCM as float samples in [-1, 1]. Other sample rates are resampled to the
 *    model's rate (16 kHz) with a windowed-sinc resampler. Samples must be finite.
 *  - Audio of any length that fits in memory is accepted. Long audio runs with local
 *    attention (see parakeet_capi_set_attention_context), so a request's working memory grows
 *    linearly with its length (docs/api.md, "Long audio", gives the bound).
 */
#ifndef PARAKEET_CAPI_H
#define PARAKEET_CAPI_H

#include <stddef.h> /* size_t */
#include <stdint.h> /* int32_t (hotword token ids), int64_t */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define PARAKEET_API __declspec(dllexport)
#else
#define PARAKEET_API __attribute__((visibility("default")))
#endif

/* Version of this ABI, on parakeet.cpp's scale: 10 says that every function of parakeet.cpp's
 * ABI 6 (its 0.2.2 release: _lang variants, batches, stream JSON and events, hotwords, N-best,
 * CTC log-probs), ABI 7 (speaker diarization, the diarization stream with its latency presets,
 * speaker-attributed ASR offline and streaming), ABI 8 (the CED sound tagger, the sound and
 * scene streams, parakeet_capi_model_kind), ABI 9 (the speaker encoder, the voice registry,
 * scene_stream_begin_speaker, transcribe_and_diarize_named_json) and ABI 10
 * (speaker_registry_add_embedding, diarize_named_pcm_json) is here with its signature and
 * meaning, so a program that checks `parakeet_capi_abi_version() >= 10` accepts this library.
 * parakeet.cpp's additions that keep ABI 10 (the fingerprint calls, speaker_embed_pcm, bundles)
 * and this library's own (thread_last_error, progress, attention, set_concurrency,
 * stream_begin_with, model_info_json, diarize_pcm_with, …) are additive: probe them by symbol. */
#define PARAKEET_CAPI_ABI_VERSION 10

/* Decoder selection for the transcribe functions (parakeet.cpp's values). */
#define PARAKEET_DECODER_DEFAULT 0    /* the model's own head: the transducer for hybrids */
#define PARAKEET_DECODER_CTC 1        /* the CTC head (ctc and hybrid_* models) */
#define PARAKEET_DECODER_TRANSDUCER 2 /* TDT or RNN-T (tdt, rnnt and hybrid_* models) */

/* A loaded model. Opaque. */
typedef struct parakeet_ctx parakeet_ctx;

/* Returns PARAKEET_CAPI_ABI_VERSION as compiled into the library. Thread-safe. */
PARAKEET_API int parakeet_capi_abi_version(void);

/* ---- Models ------------------------------------------------------------------------------ */

/* Loads a GGUF model (the parakeet.cpp schema: general.architecture "parakeet"; weights F32,
 * F16 or Q8_0). The file is memory-mapped and must not be modified while loaded.
 * Same as parakeet_capi_load_with(gguf_path, NULL): the environment's defaults.
 * Returns a new context, or NULL with the reason in parakeet_capi_load_error(): missing or
 * unreadable file, corrupt or truncated GGUF, another architecture, a missing tensor or a
 * tensor of the wrong shape, an unsupported setting. gguf_path NULL is an error.
 * Thread-safe; free the context with parakeet_capi_free(). */
PARAKEET_API parakeet_ctx* parakeet_capi_load(const char* gguf_path);

/* parakeet_capi_load with options, a JSON object (NULL or "" means {}). Every key is
 * optional; an unknown key, a value of the wrong type or out of range is an error (NULL, the
 * reason in parakeet_capi_load_error()). The environment variables of the same meaning
 * (docs/api.md, "Load options") give the defaults; a key overrides its variable.
 *   "isa":            "scalar" | "avx2" | "avx512": the kernel level (at most the CPU's;
 *                     default: the CPU's own, or PARAKEET_CPU)
 *   "attention":      "auto" | "full" | [L, R] (L, R >= 1: local attention); default auto,
 *                     or PARAKEET_ATT_CONTEXT
 *   "q8_all":         bool: a q8_0 model quantises its remaining F32 matrices at load
 *                     (default true, or PARAKEET_Q8_ALL)
 *   "q8_subsampling": bool: ... and the subsampling's pointwise convolutions (default false,
 *                     or PARAKEET_Q8_SUBSAMPLING)
 *   "bf16":           bool: round an f32/f16 model's encoder matrices to bfloat16 (default
 *                     false, or PARAKEET_BF16; needs AVX512_BF16 at the avx512 level)
 *   "threads":        integer 1..1024: the context's compute-thread budget (default
 *                     PARAKEET_THREADS, else the physical cores); set_concurrency divides it
 *   "component":      string: a bundle's component to load by name (see Bundles below;
 *                     default: the bundle's default choice; an error for a plain model file)
 * Thread-safe; free the context with parakeet_capi_free(). */
PARAKEET_API parakeet_ctx* parakeet_capi_load_with(const char* gguf_path, const char* options_json);

/* What a context holds (parakeet.cpp's values; this library loads ASR, Sortformer diarization,
 * Silero VAD and voicedetect ECAPA-TDNN speaker models).
 * Every entry point refuses a context of the wrong kind with PARAKEET_ERROR_UNSUPPORTED. */
#define PARAKEET_MODEL_KIND_NONE 0
#define PARAKEET_MODEL_KIND_ASR 1
#define PARAKEET_MODEL_KIND_DIARIZATION 2
#define PARAKEET_MODEL_KIND_SOUND 3
#define PARAKEET_MODEL_KIND_SPEAKER 4
#define PARAKEET_MODEL_KIND_VAD 5

/* The kind of model ctx holds; PARAKEET_MODEL_KIND_NONE for NULL. Thread-safe. */
PARAKEET_API int parakeet_capi_model_kind(const parakeet_ctx* ctx);

/* The reason the calling thread's last parakeet_capi_load*() failed ("" after a success; never
 * NULL). Thread-local; the pointer is valid until this thread's next call into the library. */
PARAKEET_API const char* parakeet_capi_load_error(void);

/* ---- Bundles (parakeet.cpp's "parakeet-bundle": several models in one GGUF; docs/bundles.md) --- */

/* parakeet_capi_load and parakeet_capi_load_with accept a bundle: they load its only "asr"
 * component, else its only component of a kind this library loads ("asr", "vad", "diar");
 * with several to choose from they fail, listing the components ("bundle has several asr
 * components, pick one by name (parakeet_capi_load_component, or --component); components:
 * a (asr), b (asr)"). The component is read in place from the one mapping. */

/* Loads the component called `component` of the bundle at gguf_path, with the environment's
 * load options (parakeet_capi_load_with's "component" key does the same with options).
 * component NULL or "" makes the default choice above. Returns NULL with the reason in
 * parakeet_capi_load_error(): not a bundle (with a name), no such component, a kind this
 * library does not load, a component that holds another model than its kind says, a
 * malformed bundle header, and every error of parakeet_capi_load. Thread-safe. */
PARAKEET_API parakeet_ctx* parakeet_capi_load_component(const char* gguf_path, const char* component);

/* The components of the bundle at gguf_path, read from its header only (no weights are
 * touched), in their stored order: a JSON array of {"name", "kind", "license", "license_url",
 * "source", "attribution", "changes", "source_sha256", "content_sha256" (strings, "" when
 * the builder had none), "tensors", "bytes" (integers)}. Components of unknown kinds are
 * listed. NULL with the reason in parakeet_capi_thread_last_error() for a file that is not a
 * bundle or whose header is malformed. Free with parakeet_capi_free_string(). Thread-safe. */
PARAKEET_API char* parakeet_capi_bundle_components_json(const char* gguf_path);

/* Frees a context and everything it owns. NULL is a no-op. No call on ctx may be running or
 * start afterwards; pointers returned by parakeet_capi_last_error(ctx) become invalid. */
PARAKEET_API void parakeet_capi_free(parakeet_ctx* ctx);

/* A JSON object describing the model: {"path", "arch", "sample_rate", "n_mels", "d_model",
 * "n_layers", "n_heads", "ff_dim", "subsampling_factor", "vocab_size", "frame_sec",
 * "has_ctc", "has_transducer", ["pred_hidden", "joint_hidden", "max_symbols"],
 * ["durations"], "tensor_types": {"f32": n, ...}, "tensor_classes": {"ffn": {"q4_K": n, ...},
 * "attention", "conv", "norm", "featurizer", "subsampling", "subsampling_out", "joint_enc",
 * "joint_pred", "joint_out", "ctc", "prediction", "other"}, "file_bytes", "packed_bytes",
 * "attention": {"mode": "auto"|"full"} or {"mode": "local", "left": L, "right": R} (the
 * context's current setting; a cache-aware model always runs {"mode": "chunked", "left",
 * "right"} with its default context), "auto_full_max_frames": the longest encoder sequence
 * (frames) auto runs with full attention, "streaming": {"mode": "buffered"} or {"mode":
 * "cache_aware", "contexts": [{"left", "right", "chunk_ms"}]} (the first context is the
 * default), "isa": the context's kernel level, chosen at load ("scalar",
 * "avx2", "avx512"), "bf16_encoder": whether the encoder's matrices were rounded to bfloat16}.
 * Returns NULL on error (ctx NULL). Free with parakeet_capi_free_string(). Thread-safe. */
PARAKEET_API char* parakeet_capi_model_info_json(parakeet_ctx* ctx);

/* ---- Transcription -------------------------------------------------------------------------
 * decoder: PARAKEET_DECODER_DEFAULT (0), _CTC (1) or _TRANSDUCER (2); asking for a head the
 * model does not have is an error, as is any other value.
 * The *_pcm functions take n_samples mono float samples at sample_rate Hz (1000..384000);
 * n_samples 0 gives an empty transcript; negative, NULL with n_samples > 0 and NaN/Inf
 * samples are errors. There is no length limit.
 * The *_path functions read a WAV file: integer PCM (8/16/24/32 bit) or float (32/64 bit),
 * any channel count (averaged to mono), any sample rate in that range. Compressed WAV
 * (ADPCM, mu-law, MP3...) and other formats are errors.
 * All return a new string (free with parakeet_capi_free_string) or NULL on error, with the
 * reason in parakeet_capi_thread_last_error() and parakeet_capi_last_error(ctx).
 * Thread-safe: concurrent calls on one ctx queue for its backend (or run in parallel on a
 * pool, see parakeet_capi_set_concurrency). Results do not depend on thread counts. */

/* The transcript text. */
PARAKEET_API char* parakeet_capi_transcribe_pcm(parakeet_ctx* ctx, const float* samples,
                                                int n_samples, int sample_rate, int decoder);
PARAKEET_API char* parakeet_capi_transcribe_path(parakeet_ctx* ctx, const char* wav_path,
                                                 int decoder);

/* The transcript as a JSON document:
 *   {"text": "...", "frame_sec": 0.08, "duration": seconds of audio,
 *    "words":  [{"w": "word", "start": s, "end": s, "conf": c}, ...],
 *    "tokens": [{"id": n, "t": s, "conf": c, "dur": frames}, ...],
 *    "attention": {"mode": "full"} or {"mode": "local", "left": L, "right": R}}
 * Token "t" is its start time (encoder frame x frame_sec), "dur" its duration in encoder
 * frames (TDT: the predicted duration; RNN-T and CTC: see docs/api.md). Confidences follow
 * NeMo's max_prob method (a word takes the minimum over its tokens). Times have 3 decimals,
 * confidences 4. "attention" is the attention that ran (auto resolved by the length). */
PARAKEET_API char* parakeet_capi_transcribe_pcm_json(parakeet_ctx* ctx, const float* samples,
                                                     int n_samples, int sample_rate, int decoder);
PARAKEET_API char* parakeet_capi_transcribe_path_json(parakeet_ctx* ctx, const char* wav_path,
                                                      int decoder);

/* A progress callback: called on the request's own thread (the caller's) with the fraction
 * of the work done, in [0, 1] and never decreasing; the last call of a finished request has
 * 1.0. Return 0 to go on, non-zero to cancel. It must not call into the library on the same
 * context's request (it may read other state freely); parakeet_capi_set_threads called from
 * inside it, which would wait for the backend the request holds, fails with
 * PARAKEET_ERROR_INVALID_ARGUMENT instead. */
typedef int (*parakeet_progress_fn)(float fraction, void* user_data);

/* The *_json functions with a progress callback (fn NULL: no progress, the same as the plain
 * functions). When fn returns non-zero the request stops at its next report, returns NULL
 * with the error "cancelled by the progress callback", and its backend is free at once for
 * the next request. Reports come between kernel calls, at least once per encoder layer. */
PARAKEET_API char* parakeet_capi_transcribe_pcm_json_progress(parakeet_ctx* ctx, const float* samples,
                                                              int n_samples, int sample_rate,
                                                              int decoder, parakeet_progress_fn fn,
                                                              void* user_data);
PARAKEET_API char* parakeet_capi_transcribe_path_json_progress(parakeet_ctx* ctx, const char* wav_path,
                                                               int decoder, parakeet_progress_fn fn,
                                                               void* user_data);
/* parakeet_capi_transcribe_pcm_json_progress with a language (target_lang as for
 * parakeet_capi_transcribe_pcm_lang): the JSON call that a server passing both a request's
 * language and its cancellation uses. */
PARAKEET_API char* parakeet_capi_transcribe_pcm_json_lang_progress(parakeet_ctx* ctx, const float* samples,
                                                                   int n_samples, int sample_rate, int decoder,
                                                                   const char* target_lang,
                                                                   parakeet_progress_fn fn, void* user_data);

/* ---- N-best (beam search) -----------------------------------------------------------------
 * NeMo's transducer beam search (strategy "beam", default_beam_search) with beam_size beams;
 * the nbest best hypotheses, best first, as parakeet.cpp's document:
 *   {"beam_size": B, "score_norm": true|false, "frame_sec": 0.08,
 *    "hypotheses": [{"text": "...", "score": s, "normalized_score": s / (tokens + 1),
 *                    "tokens": [{"id": n, "frame": f, "t": s, "duration_frames": d,
 *                                "duration": s}, ...]}, ...]}
 * score: the sum of the hypothesis' log-probabilities; score_norm != 0 ranks by
 * normalized_score (NeMo's default), 0 by score. "frame" is the encoder frame a token was
 * emitted at, "duration_frames" its TDT duration (RNN-T: 1). TDT heads (tdt, hybrid_tdt_ctc)
 * and, beyond parakeet.cpp, RNN-T heads are searched; a CTC-only model is an error, as is
 * anything but beam_size >= nbest >= 1. beam_size 1 is NeMo's beam search with one beam, not
 * greedy decoding. target_lang as for parakeet_capi_transcribe_pcm_lang. Audio, errors and
 * threading as for the transcribe functions above. */
PARAKEET_API char* parakeet_capi_transcribe_path_nbest_json(parakeet_ctx* ctx, const char* wav_path,
                                                            int beam_size, int nbest, int score_norm,
                                                            const char* target_lang);
PARAKEET_API char* parakeet_capi_transcribe_pcm_nbest_json(parakeet_ctx* ctx, const float* samples,
                                                           int n_samples, int sample_rate, int beam_size,
                                                           int nbest, int score_norm, const char* target_lang);
/* parakeet_capi_transcribe_pcm_nbest_json with a progress callback, as the *_json_progress
 * functions take it (fn NULL: none): reports come from the encoder, as there, and from the
 * search at every encoder frame, so a non-zero return stops a beam search too. */
PARAKEET_API char* parakeet_capi_transcribe_pcm_nbest_json_progress(parakeet_ctx* ctx, const float* samples,
                                                                    int n_samples, int sample_rate,
                                                                    int beam_size, int nbest, int score_norm,
                                                                    parakeet_progress_fn fn, void* user_data);

/* ---- Attention -----------------------------------------------------------------------------
 * The encoder's self-attention over the whole recording (full) costs time and memory growing
 * with the square of its length; local attention (NeMo's rel_pos_local_attn, each frame sees
 * `left` frames before it and `right` after) grows linearly, which is what hours of audio
 * need. Both run on the same weights. */

/* Chooses the attention of ctx's requests:
 *   (0, 0)   auto (the default): full attention up to "auto_full_max_frames" encoder frames
 *            (see parakeet_capi_model_info_json; 0.08 s each), local [128, 128] above;
 *   (-1, -1) always full;
 *   (L, R)   with L > 0 and R > 0: always local [L, R].
 * Any other pair, and ctx NULL, is an error (non-zero return, the reason in the last-error
 * functions). At load the setting comes from the load option "attention" (or
 * PARAKEET_ATT_CONTEXT: W > 0 local [W, W], 0 full; unset: auto). It applies to requests that start after the call; running ones keep
 * the setting they started with. Returns 0 on success. Thread-safe. */
PARAKEET_API int parakeet_capi_set_attention_context(parakeet_ctx* ctx, int left, int right);

/* ---- Concurrency ---------------------------------------------------------------------------
 * By default every context runs its requests on one process-wide backend (a team of compute
 * threads plus a memory arena): concurrent calls are safe and queue behind it. A pool gives a
 * context K backends, so K requests run at once against one copy of the weights; each request
 * borrows one backend for its whole duration and runs on the caller's thread (the library
 * starts no threads besides compute workers). Callers beyond K wait, first come first served.
 * Results are bitwise identical for every pool size and thread count.
 * Performance note: backends x threads_each above the number of physical cores slows every
 * request down; the library does not pin threads. */

/* Turns on a pool of `backends` backends with `threads_each` compute threads each for ctx.
 * threads_each <= 0 divides the default thread budget (physical cores, or PARAKEET_THREADS)
 * among the backends, at least 1 each. backends <= 1 removes the pool and returns to the
 * process-wide backend. backends above 64 are capped at 64. Safe while requests run: running
 * calls finish on the pool they started on, which is destroyed (its threads joined) after
 * its last request. Returns the number of backends now serving ctx (1 without a pool), or
 * -1 on error (ctx NULL). Thread-safe. */
PARAKEET_API int parakeet_capi_set_concurrency(parakeet_ctx* ctx, int backends, int threads_each);

/* Bytes held by the arenas of ctx's pool (0 without a pool): the per-request working memory
 * a pool costs on top of the shared weights. Thread-safe. Returns -1 when ctx is NULL. */
PARAKEET_API long long parakeet_capi_pool_working_set_bytes(parakeet_ctx* ctx);

/* Dynamic batching of ctx's offline requests. A short upload is a few dozen encoder frames, so
 * a request alone reads every weight of the model for few rows. With batching on, the
 * parakeet_capi_transcribe_* calls of ctx that run at the same time gather into batches: a
 * call queues its request and waits; the oldest waiting call runs a batch of up to max_batch
 * queued requests, oldest first, on a backend of ctx's pool, as soon as max_batch requests
 * wait, or, while fewer batches run than ctx has backends, as soon as it is the only request
 * (a lone request runs at once) or has waited max_wait_ms; while every backend is busy the
 * queue gathers for the next batch. A batch runs each request's front end, one encoder pass over the
 * frames of all of them and one lockstep greedy decode (TDT/RNN-T; CTC per request); every
 * transcript is bitwise what the request gets alone. Beam search, hotwords and requests over
 * 30 s of audio run alone at once. A request's progress callback is called with 0 before it
 * queues and 1 when its transcript is ready (returning 0 cancels it then); a batch is not
 * interrupted. A request's own errors (its audio, its options) are its own; an error of a
 * batch's shared work (out of memory) is every one of its requests'. The library starts no
 * thread: the calling threads run the batches.
 * max_batch >= 2 turns batching on (or changes it; requests already queued finish in their
 * batcher), 0 or 1 turns it off; max_wait_ms >= 0. Returns 0, or -1 on error (ctx NULL, not an
 * ASR context, a negative value). Thread-safe. */
PARAKEET_API int parakeet_capi_set_request_batching(parakeet_ctx* ctx, int max_batch, int max_wait_ms);
/* What ctx's request batching did since it was last set, as JSON (free with
 * parakeet_capi_free_string; NULL on error):
 *   {"max_batch", "max_wait_ms" (0 and 0 when off), "batches": batches run,
 *    "batch_sizes": [batches of 1 request, of 2, ... of max_batch],
 *    "waited_ms_max", "waited_ms_mean": how long requests waited for their batch,
 *    "unbatched": requests that ran alone (beam search, hotwords, long audio)} */
PARAKEET_API char* parakeet_capi_request_batching_stats_json(parakeet_ctx* ctx);

/* Sets the number of compute threads of the process-wide backend (used by every context
 * without a pool); n <= 0 restores the default (physical cores, or PARAKEET_THREADS). Waits
 * for a request running on that backend to finish. Returns the new thread count. */
PARAKEET_API int parakeet_capi_set_threads(int n_threads);

/* ---- Streaming ---------------------------------------------------------------------------
 * Live transcription of offline Parakeet models by NeMo's buffered chunked inference
 * (speech_to_text_streaming_infer_rnnt.py): the audio is cut into chunks of `chunk` seconds;
 * each chunk is encoded in a window with up to `left` seconds of audio before it and `right`
 * seconds after it (so text for a chunk is final `chunk + right` seconds after the chunk
 * starts), only the chunk's encoder frames are decoded, and the decoder state (TDT/RNN-T
 * prediction net, CTC last label) carries from chunk to chunk. Seconds are truncated to whole
 * encoder frames (0.08 s) as NeMo does. The result depends only on the audio and the
 * settings: not on how the caller cuts the audio into feeds, on threads or on the pool.
 *
 * A stream holds no backend between calls: each chunk borrows one of its context's backends
 * (the pool's, see parakeet_capi_set_concurrency) only while it computes, so K backends serve
 * many more than K live streams. One stream is used by one thread at a time (calls on one
 * stream from several threads are serialised); different streams may be fed from different
 * threads at once. The context must outlive its streams.
 *
 * Errors are reported like every other call's: NULL (or -1) with the reason in
 * parakeet_capi_thread_last_error() and parakeet_capi_last_error(ctx) of the stream's
 * context. Strings are freed with parakeet_capi_free_string(). */
typedef struct parakeet_stream parakeet_stream;

/* Bits of parakeet_capi_stream_feed's *eou_out: an end-of-utterance / backchannel token was
 * decoded (models whose vocabulary has <EOU> / <EOB>; offline Parakeet models have neither). */
#define PARAKEET_EVENT_EOU 1
#define PARAKEET_EVENT_EOB 2

/* One <EOU>/<EOB> event (field order is ABI, as parakeet.cpp's). */
typedef struct parakeet_stream_event {
    int token;         /* vocabulary id of the special token */
    int is_eob;        /* 0 = <EOU>, 1 = <EOB> */
    int encoder_frame; /* frame of the emission, from the start of the stream */
    float time_sec;    /* encoder_frame * frame_sec */
} parakeet_stream_event;

/* Begins a stream on ctx with the default settings. An offline model streams by NeMo's
 * buffered chunked inference with left 10 s, chunk 2 s, right 2 s (NeMo's recommendation for
 * about 4 s latency). A cache-aware streaming model (FastConformer trained with chunked_limited
 * attention, parakeet.encoder.att_context_style) streams as NeMo's cache-aware pipeline does
 * (CacheAwareStreamingAudioBuffer + conformer_stream_step) with its default attention context,
 * the first of parakeet.encoder.att_context_presets: chunks of (R + 1) * 80 ms (the first one
 * 10 ms of audio plus R * 80 ms), each decoded as soon as its audio has arrived; the token ids
 * and text are NeMo's. The model's default decoder either way. NULL on error. */
PARAKEET_API parakeet_stream* parakeet_capi_stream_begin(parakeet_ctx* ctx);
/* The same with a language: a prompt-conditioned model's locale (NULL or "": its default;
 * unknown: NULL, the error naming the locales it knows); other models ignore it. */
PARAKEET_API parakeet_stream* parakeet_capi_stream_begin_lang(parakeet_ctx* ctx, const char* target_lang);
/* Begins a stream with settings from a JSON object (NULL or "" for the defaults):
 *   offline models:     {"chunk_sec": 2, "left_sec": 10, "right_sec": 2, "decoder": 0}
 *   cache-aware models: {"att_context": [70, 1], "decoder": 0, "language": "de-DE"}
 * chunk_sec >= 0.08 (one encoder frame), left_sec and right_sec >= 0, each at most 600;
 * att_context one of the model's contexts ([left, right] in encoder frames; the error names
 * them); decoder as PARAKEET_DECODER_*; language as for stream_begin_lang. Unknown keys,
 * out-of-range values, a context the model lacks and the other kind's options are errors. */
PARAKEET_API parakeet_stream* parakeet_capi_stream_begin_with(parakeet_ctx* ctx, const char* options_json);

/* Feeds `n_samples` samples of 16 kHz mono float audio (any count, 0 included) and decodes
 * every chunk that has become complete. Returns the text that became final during this call
 * ("" when none; the concatenation of all returned texts is the final transcript's text).
 * *eou_out (when not NULL) is set to the PARAKEET_EVENT_* bits fired during the call. */
PARAKEET_API char* parakeet_capi_stream_feed(parakeet_stream* s, const float* pcm, int n_samples, int* eou_out);
/* Decodes the rest of the audio (the last chunk) and returns the text that became final.
 * Afterwards the stream accepts no more audio. */
PARAKEET_API char* parakeet_capi_stream_finalize(parakeet_stream* s);

/* Like stream_feed / stream_finalize, returning a JSON document:
 *   {"text": new final text, "eou": 0|1, "eob": 0|1, "frame_sec": 0.08,
 *    "events": [{"type": "eou"|"eob", "frame", "t"}],
 *    "words": [{"w","start","end","conf"}]      (the words that became final, stream times),
 *    "tokens": [{"id","t","conf","dur"}]         (the tokens that became final),
 *    "partial": text decoded after the final text (the open word and the right context;
 *               it may still change),
 *    "audio_sec": audio fed so far, "final_sec": audio whose text is final,
 *    "chunks": chunks decoded so far, "finalized": true after stream_finalize_json}
 * The JSON calls drain the event queue into "events". */
PARAKEET_API char* parakeet_capi_stream_feed_json(parakeet_stream* s, const float* pcm, int n_samples);
PARAKEET_API char* parakeet_capi_stream_finalize_json(parakeet_stream* s);

/* Moves the events decoded since the last drain to *out_events (a malloc'd array, free with
 * parakeet_capi_free_events; NULL when none) and returns their number, or -1 on error (s or
 * out_events NULL). */
PARAKEET_API int parakeet_capi_stream_drain_events(parakeet_stream* s, parakeet_stream_event** out_events);
PARAKEET_API void parakeet_capi_free_events(parakeet_stream_event* events);
/* Frees a stream (NULL is a no-op). A stream that a call on another thread is still inside
 * (feed, finalize, drain) is not freed: the error (PARAKEET_ERROR_INVALID_ARGUMENT, in
 * parakeet_capi_thread_last_error()) says so and the stream stays valid; free it once that call
 * has returned. A stream in a group leaves it. */
PARAKEET_API void parakeet_capi_stream_free(parakeet_stream* s);

/* ---- Stream groups: batched steps of concurrent live streams -----------------------------
 * A live stream computes little per chunk but reads every weight of the model for it: a 160 ms
 * chunk of a cache-aware stream is two encoder frames; a buffered stream of an offline model
 * encodes a whole window (left + chunk + right, e.g. 10-2-2 s) for each chunk it decodes. The
 * streams of one context that join a group share their encoder passes. A feed (or finalize) of
 * a member takes its audio and, when a chunk is ready, waits for the group to run it in a batch
 * with the ready chunks of other members: one encoder pass with the rows of all of them (a
 * cache-aware stream attends over its own cache; a buffered stream's window is its own
 * utterance, with its own mel normalisation and length), then one batched greedy decode (each
 * stream decodes with its own state). The model decides which kind its streams are, so a group
 * holds one kind. A batch runs, on a backend of the context's pool, as soon as max_batch members
 * wait, or every member waits (so a lone member runs at once), or its oldest chunk has waited
 * max_wait_ms; batches on different backends run at the same time. The library starts no
 * thread: the feeding threads run the batches. Each member's results are bitwise what it gets
 * outside the group, whatever it is batched with.
 * Streams join and leave at any time between their calls; calls on members are what they are
 * for other streams (one thread at a time per stream; errors of a stream's own input, such as
 * non-finite samples, are its own). An error inside a batch (out of memory) is the error of
 * every feed in that batch. The context must outlive its groups. */
typedef struct parakeet_stream_group parakeet_stream_group;
/* A group for ctx's streams: max_batch >= 1 streams per batch, max_wait_ms >= 0 the longest a
 * ready chunk waits for others. NULL on error (a bad value, a context that is not ASR). */
PARAKEET_API parakeet_stream_group* parakeet_capi_stream_group_new(parakeet_ctx* ctx, int max_batch,
                                                                   int max_wait_ms);
/* Puts s into g / takes it out. 0, or 1 with the error on g's context: g or s NULL, a stream
 * of another context, finalized, already in a group (join) or not in g (leave). */
PARAKEET_API int parakeet_capi_stream_group_join(parakeet_stream_group* g, parakeet_stream* s);
PARAKEET_API int parakeet_capi_stream_group_leave(parakeet_stream_group* g, parakeet_stream* s);
/* The streams in g, or -1 (g NULL). */
PARAKEET_API int parakeet_capi_stream_group_size(parakeet_stream_group* g);
/* What g did, as JSON (free with parakeet_capi_free_string; NULL on error, g NULL):
 *   {"max_batch", "max_wait_ms", "members", "batches": batches run,
 *    "batch_sizes": [batches of 1 stream, of 2, ... of max_batch],
 *    "waited_ms_max", "waited_ms_mean": how long the streams' chunks waited for their batch} */
PARAKEET_API char* parakeet_capi_stream_group_stats_json(parakeet_stream_group* g);
/* Frees a group (NULL is a no-op). A group that still has members is not freed: the error
 * (PARAKEET_ERROR_INVALID_ARGUMENT) says so and it stays valid. No other call may use g while
 * it is freed. */
PARAKEET_API void parakeet_capi_stream_group_free(parakeet_stream_group* g);

/* ---- parakeet.cpp's offline calls ---------------------------------------------------------
 * The rest of parakeet.cpp's offline C API, with its names, signatures and semantics, so that
 * programs and bindings written for it (its PyPI package, LocalAI) run on this library. Where
 * parakeet.cpp crashes or does something odd, these return an error instead (noted below). */

/* transcribe_path / transcribe_pcm with a language. `target_lang` (NULL or "" for the model's
 * default) selects the prompt of a prompt-conditioned model (NeMo's *_prompt.py classes, e.g.
 * the multilingual streaming models: parakeet.prompt.* in the file); a locale the model lacks is
 * an error naming the ones it knows. Other models ignore it, as parakeet.cpp does. The _lang
 * variants below (batches, N-best, contextual, stream_begin_lang) take it the same way. */
PARAKEET_API char* parakeet_capi_transcribe_path_lang(parakeet_ctx* ctx, const char* wav_path, int decoder,
                                                      const char* target_lang);
PARAKEET_API char* parakeet_capi_transcribe_pcm_lang(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                     int sample_rate, int decoder, const char* target_lang);

/* Batches. `samples[i]` holds `n_samples[i]` samples of clip i at `sample_rate`. The clips run
 * in batched passes: sorted longest first, up to 16 share one encoder pass and one greedy
 * decode; clips over 30 s run alone. With a pool (parakeet_capi_set_concurrency) one batch runs
 * per backend at a time (on helper threads that live for the call). Each clip's result is
 * bitwise the single-clip call's, in input order. n_clips == 0 is an empty batch (parakeet.cpp
 * aborts the process). A failing clip fails the call with its own error, "clip i: ...", the
 * first failing clip's; on error every result is NULL and nothing is left to free. */
/* 0 on success with out[i] = clip i's text (free each with parakeet_capi_free_string);
 * nonzero on error. */
PARAKEET_API int parakeet_capi_transcribe_pcm_batch(parakeet_ctx* ctx, const float* const* samples,
                                                    const int* n_samples, int n_clips, int sample_rate,
                                                    int decoder, char** out);
PARAKEET_API int parakeet_capi_transcribe_pcm_batch_lang(parakeet_ctx* ctx, const float* const* samples,
                                                         const int* n_samples, int n_clips, int sample_rate,
                                                         int decoder, const char* target_lang, char** out);
/* The clips concatenated in `samples_concat` (sum of n_samples floats); returns a JSON array
 * of the clips' transcribe_pcm_json documents ("[]" for n_clips == 0), or NULL on error. */
PARAKEET_API char* parakeet_capi_transcribe_pcm_batch_json(parakeet_ctx* ctx, const float* samples_concat,
                                                           const int* n_samples, int n_clips, int sample_rate,
                                                           int decoder);
PARAKEET_API char* parakeet_capi_transcribe_pcm_batch_json_lang(parakeet_ctx* ctx, const float* samples_concat,
                                                                const int* n_samples, int n_clips,
                                                                int sample_rate, int decoder,
                                                                const char* target_lang);

/* The CTC head's log-softmax output (NeMo's ctc log-probs) for the audio, whatever the model's
 * default head: on success returns 0 with *out_logits a malloc'd [*out_T, *out_vocab_plus_1]
 * row-major matrix, blank last (free with parakeet_capi_free_logits). A NULL ctx or out
 * pointer returns nonzero and writes nothing; any other error returns nonzero with *out_logits
 * NULL and the sizes 0 (a model without a CTC head, bad audio). */
PARAKEET_API int parakeet_capi_transcribe_pcm_logits(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                     int sample_rate, float** out_logits, int* out_T,
                                                     int* out_vocab_plus_1);
PARAKEET_API void parakeet_capi_free_logits(float* logits);

/* Gives back the working memory of the process-wide backend (contexts without a pool). Safe
 * at any time, also while contexts are alive and requests run (it waits for the backend);
 * later calls work as before. */
PARAKEET_API void parakeet_capi_shutdown(void);

/* parakeet.cpp's legacy one-shot API (its include/parakeet.h), for programs that still use it.
 * parakeet_version: this library's version string (static, do not free).
 * parakeet_transcribe_file: loads `model_path`, transcribes `wav_path` with the default head,
 * frees the model; 0 with *out_text a new string (free with parakeet_free_string), nonzero on
 * error (*out_text NULL; the reason in parakeet_capi_thread_last_error()).
 * parakeet_free_string: the same as parakeet_capi_free_string. */
PARAKEET_API const char* parakeet_version(void);
PARAKEET_API int parakeet_transcribe_file(const char* model_path, const char* wav_path, char** out_text);
PARAKEET_API void parakeet_free_string(char* s);

/* ---- Hotwords (context biasing) -------------------------------------------------------------
 * parakeet.cpp's hotword API. A phrase graph (a token trie of the phrases) is compiled once
 * and then biases greedy decoding: at each TDT step (CTC frame) the candidates are the
 * acoustic top-M labels, the graph's continuations and the blank, each scored by its logit
 * plus the graph's bonus; every matched token earns score x weight, and breaking off a
 * partial match gives back what it earned. A graph is immutable and reference-counted: use
 * it from any number of threads and calls at once; it stays valid after its ctx is freed.
 * Phrase text is tokenised as SentencePiece BPE would (from the model file's pieces and
 * parakeet.tokenizer.scores; without scores, by longest match). Typical scores: about 1.5 for
 * a TDT model, about 8 for a CTC one. Beam search does not take hotwords. */

typedef struct parakeet_context_graph parakeet_context_graph;

/* Compiles n_phrases UTF-8 phrases (weights: one per phrase, > 0; NULL: all 1) with the global
 * bias `score` (finite; <= 0 effectively disables biasing). Returns NULL on error, with the
 * reason in last_error(ctx): "phrases is NULL" (phrases NULL or n_phrases <= 0), "phrase i is
 * NULL", "parakeet: phrase is empty", "parakeet: phrase '…' contains a character this model's
 * tokenizer cannot represent", "context phrase i: weight must be positive", "context graph:
 * alpha must be finite". Free with parakeet_capi_context_free(). Thread-safe. */
PARAKEET_API parakeet_context_graph* parakeet_capi_context_create_text(parakeet_ctx* ctx, const char** phrases,
                                                                       const float* weights, int n_phrases,
                                                                       float score);

/* The same from token ids: phrase i is ids[i][0, lens[i]). Ids must lie in [0, vocab_size]
 * ("context phrase i: has a token id outside the vocabulary"); an empty phrase is refused. */
PARAKEET_API parakeet_context_graph* parakeet_capi_context_create_tokens(parakeet_ctx* ctx, const int32_t** ids,
                                                                         const int* lens, const float* weights,
                                                                         int n_phrases, float score);

/* Releases a graph (calls still using it keep their own reference). Safe on NULL. */
PARAKEET_API void parakeet_capi_context_free(parakeet_context_graph* graph);

/* The graph's size: states (the root plus one per distinct phrase prefix), arcs, phrases
 * (as given, duplicates included) and the compile time in ms. Any output pointer may be NULL;
 * a NULL graph leaves the outputs untouched. */
PARAKEET_API void parakeet_capi_context_info(const parakeet_context_graph* graph, int* n_states, int* n_arcs,
                                             int* n_phrases, double* build_ms);

/* Greedy decoding biased by `graph`, as a JSON document: transcribe_path_json's, plus
 * "context": {"transitions", "candidate_checks", "completed_phrases", "failed_prefixes",
 * "final_rollback"}. The head is the TDT one when the model has it (hybrids too), else CTC;
 * an RNN-T-only model is refused ("parakeet: contextual decoding needs a TDT or CTC head (arch
 * 'rnnt')"). acoustic_top_m <= 0 means 8. lang as for parakeet_capi_transcribe_pcm_lang. A NULL graph
 * gives "context graph is NULL". Free the result with parakeet_capi_free_string(). */
PARAKEET_API char* parakeet_capi_transcribe_path_contextual_json(parakeet_ctx* ctx, const char* wav_path,
                                                                 const parakeet_context_graph* graph,
                                                                 int acoustic_top_m, const char* lang);
PARAKEET_API char* parakeet_capi_transcribe_pcm_contextual_json(parakeet_ctx* ctx, const float* samples,
                                                                int n_samples, int sample_rate,
                                                                const parakeet_context_graph* graph,
                                                                int acoustic_top_m, const char* lang);

/* ---- Voice activity detection (Silero VAD v6) ----------------------------------------------
 * A context loaded from a `silero_vad` GGUF file (parakeet.cpp's schema; written by
 * `parakeet-cli convert silero_vad.onnx out.gguf`) has kind PARAKEET_MODEL_KIND_VAD. Every call
 * below refuses any other kind (PARAKEET_ERROR_UNSUPPORTED), and ASR calls refuse a VAD ctx.
 * The model is read-only: any number of calls and streams run on one ctx at once.
 *
 * options_json (NULL or "" = {}); unknown keys, wrong types and out-of-range values are
 * PARAKEET_ERROR_INVALID_ARGUMENT. Defaults are Silero's get_speech_timestamps':
 *   "threshold" (0,1] 0.5; "neg_threshold" (0, threshold], default max(threshold-0.15, 0.01);
 *   "min_speech" s [0,3600] 0.25; "min_pause" s [0,3600] 0.1 (silence that ends speech);
 *   "speech_pad" s [0,10] 0.03; "max_segment" s [1,86400] (speech: no limit; segments: 30);
 *   "mode" "speech" (Silero's segments, hysteresis included) | "segments" (speech segments
 *   merged into pieces of at most max_segment, cut at pauses); "probabilities" bool false.
 * Result: {"mode", "duration", "frame_sec", "sample_rate" (the model rate used), "backend", "isa" (the kernel level),
 * "segments": [{"start", "end"}] (seconds, 6 decimals), ["probabilities": [one per 32 ms
 * frame, shortest exact float form]]}. Rates: 16000 and 8000 natively; a multiple of 16000 is
 * decimated (every k-th sample, as Silero does); others are PARAKEET_ERROR_INVALID_AUDIO
 * ("... resample first (parakeet_capi_vad_path_json and parakeet_capi_transcribe_*_vad_with
 * resample any rate themselves)"). */
PARAKEET_API char* parakeet_capi_vad_pcm_json(parakeet_ctx* ctx, const float* samples, int n_samples,
                                              int sample_rate, const char* options_json);
/* The same for a WAV file (formats as the *_path transcription calls; channels averaged). A
 * file at a rate the PCM call refuses (1000..384000 Hz) is resampled to 16 kHz first, as the
 * transcription calls resample; "duration" is then the file's. */
PARAKEET_API char* parakeet_capi_vad_path_json(parakeet_ctx* ctx, const char* wav_path, const char* options_json);

/* ---- Speaker diarization (Sortformer) -----------------------------------------------------
 * A context loaded from a diarization GGUF file (parakeet.arch "diarization": ours, written by
 * `parakeet-cli convert sortformer.nemo out.gguf`, or parakeet.cpp's schema) has kind
 * PARAKEET_MODEL_KIND_DIARIZATION. These calls refuse other kinds (PARAKEET_ERROR_UNSUPPORTED;
 * on an ASR ctx: "context holds an ASR model; diarize_* needs a diarization model"), and the
 * ASR calls refuse a diarization ctx ("context holds a diarization model; use
 * parakeet_capi_diarize_*"). These calls compute what NeMo's diarize() computes for the
 * checkpoint: the offline network (whole-clip attention) when its config has streaming_mode
 * off, forward_streaming with its own streaming settings when on (docs/diarization.md).
 * Diarization contexts use the backend pool like
 * ASR ones (parakeet_capi_set_concurrency); results do not depend on the pool or threads.
 * Result (a new string, free with parakeet_capi_free_string; NULL on error):
 *   {"speakers": <the model's speaker count>, "segments": [{"speaker", "start", "end"}]}
 * speakers numbered from 0 in order of arrival, times in seconds with 2 decimals, sorted by
 * start then speaker. n_samples == 0 gives {"speakers": N, "segments": []}. Audio at any rate
 * 1000..384000 Hz is resampled to the model's; non-finite samples are
 * PARAKEET_ERROR_INVALID_AUDIO; samples NULL with n_samples > 0, or n_samples < 0, is
 * "invalid samples buffer". */
PARAKEET_API char* parakeet_capi_diarize_pcm(parakeet_ctx* ctx, const float* samples, int n_samples,
                                             int sample_rate);
/* The same for a WAV file (formats as the *_path transcription calls; channels averaged). */
PARAKEET_API char* parakeet_capi_diarize_path(parakeet_ctx* ctx, const char* wav_path);
/* diarize_pcm with options_json (NULL or "" = {}), NeMo's post-processing parameters:
 *   "onset", "offset" [0,1] (default: the file's, 0.5); "pad_onset", "pad_offset" s [0,10] 0;
 *   "min_duration_on", "min_duration_off" s [0,3600] 0; "probabilities" bool false: adds
 *   "frame_sec" and "probabilities": one array per speaker of per-frame values (shortest exact
 *   float form). Unknown keys, wrong types and out-of-range values are
 *   PARAKEET_ERROR_INVALID_ARGUMENT. "streaming" (NeMo's forward_streaming settings) runs
 *   forward_streaming with those settings (docs/api.md). */
PARAKEET_API char* parakeet_capi_diarize_pcm_with(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                  int sample_rate, const char* options_json);
/* diarize_pcm_with with a progress callback, as the *_json_progress functions (fn NULL: the
 * same as diarize_pcm_with): the fraction is the offline pass's stages (0, the front end, the
 * conformer layers' row chunks, 1 after the speaker head) or, when the checkpoint or "streaming"
 * runs forward_streaming, the chunks done of the clip's chunks (with each chunk's conformer
 * layers in between). A non-zero return cancels: NULL, PARAKEET_ERROR_CANCELLED on ctx, and the
 * context is free for the next request. The document equals diarize_pcm_with's. */
PARAKEET_API char* parakeet_capi_diarize_pcm_with_progress(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                           int sample_rate, const char* options_json,
                                                           parakeet_progress_fn fn, void* user_data);

/* ---- Speaker-attributed ASR ("who said what"; parakeet.cpp's ABI 7 calls) -----------------
 * The ASR ctx transcribes the clip (default decoder), the diarization ctx diarizes it (as
 * diarize_pcm), and each word takes a speaker: the one whose segment overlaps it most (the
 * first in start order on a tie), else the nearest segment within 0.5 s (the later on a tie),
 * else -1 (times compared with a 1e-9 s tolerance). An utterance is a run of one speaker's
 * words with pauses of at most 0.5 s: text joined by spaces, conf the minimum of its words'.
 * Errors: bad input (a NULL or wrong-kind ctx, the buffer, out pointers, the sample rate) and
 * transcription failures are recorded on asr_ctx, diarization failures on diar_ctx (and on the
 * calling thread, parakeet_capi_thread_last_error); a success clears both. */
typedef struct parakeet_sas_result {
    int speaker; /* 0-based, or -1: no segment near the words */
    char* text;
    float start; /* seconds */
    float end;
    float conf;  /* minimum word confidence */
} parakeet_sas_result;

/* The utterances in *out (a new array, NULL when there are none; free with
 * parakeet_capi_free_sas_results(*out, *n_out)) and their count in *n_out. Returns 0, or 1 on
 * error (*out NULL, *n_out 0). */
PARAKEET_API int parakeet_capi_transcribe_and_diarize(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx,
                                                      const float* samples, int n_samples, int sample_rate,
                                                      parakeet_sas_result** out, int* n_out);
/* The same as a document (free with parakeet_capi_free_string; NULL on error):
 *   {"speakers": N, "utterances": [{"speaker", "text", "start", "end", "conf"}],
 *    "words": [the same keys, one per word],
 *    "segments": [{"speaker", "start", "end"}], "transcript": {...}}
 * utterance and segment times with 2 decimals, word times with 3, conf with 4. "segments"
 * (diarize_pcm's) and "transcript" (transcribe_pcm_json's document, whose "words" are the
 * words above in the same order) are ours, beyond parakeet.cpp's keys. */
PARAKEET_API char* parakeet_capi_transcribe_and_diarize_json(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx,
                                                             const float* samples, int n_samples,
                                                             int sample_rate);
/* transcribe_and_diarize_json with a progress callback (ours; fn NULL: the same as the call
 * without). One fraction over both stages, each a pass over the clip: the transcription's
 * fraction f (as transcribe_pcm_json_progress reports it) is reported as f / 2, then the
 * diarization's (as diarize_pcm_with_progress reports it) as 0.5 + f / 2, ending at 1. A
 * non-zero return cancels: NULL and PARAKEET_ERROR_CANCELLED, recorded on the context of the
 * stage it stopped (asr_ctx while transcribing, diar_ctx while diarizing) and on the calling
 * thread; both contexts are free for the next request. The document equals the one without a
 * callback. */
PARAKEET_API char* parakeet_capi_transcribe_and_diarize_json_with_progress(parakeet_ctx* asr_ctx,
                                                                           parakeet_ctx* diar_ctx,
                                                                           const float* samples, int n_samples,
                                                                           int sample_rate, parakeet_progress_fn fn,
                                                                           void* user_data);
/* Frees the n results of transcribe_and_diarize and their texts (NULL is a no-op). */
PARAKEET_API void parakeet_capi_free_sas_results(parakeet_sas_result* results, int n);

/* Live speaker-attributed ASR: a diarization stream (as diarize_stream_begin[_latency]) on
 * diar_ctx and windows transcribed by asr_ctx under parakeet.cpp's commit rule: once >= 4 s of
 * uncommitted audio up to the diarized time is buffered, that window is transcribed; its words
 * ending >= 1 s before the window's end commit and the next window starts after them; with none,
 * the audio up to the first word heard (or that limit) minus 0.3 s is let go; a first word that
 * repeats the last committed one (text ignoring case and punctuation, start within 0.5 s) is
 * dropped; is_last commits the rest; a window grown to 30 s commits all its words (ours). The
 * text lags the audio by the diarizer's latency plus 1-5 s. Each committed word takes its
 * speaker from the segments known then (the closed ones, and the open ones up to the diarized
 * time) by the rule above. Both contexts are borrowed (free the stream first); one call at a
 * time per stream; audio at the diarization model's rate (16 kHz). Latency as for
 * diarize_stream_begin_latency (outside 0..3: INVALID_ARGUMENT). NULL on error (on asr_ctx). */
typedef struct parakeet_sas_stream parakeet_sas_stream;
PARAKEET_API parakeet_sas_stream* parakeet_capi_sas_stream_begin(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx);
PARAKEET_API parakeet_sas_stream* parakeet_capi_sas_stream_begin_latency(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx,
                                                                         int latency);
/* Feeds n_samples (0 is fine). *out / *n_out (either may be NULL) get the utterances of the
 * words committed in this call (free with parakeet_capi_free_sas_results; NULL when none).
 * Returns 0, or 1: input errors ("stream already finished" after is_last, "invalid samples
 * buffer", non-finite samples) and transcription failures on asr_ctx, diarization failures on
 * diar_ctx; a success clears asr_ctx's error. */
PARAKEET_API int parakeet_capi_sas_stream_feed(parakeet_sas_stream* s, const float* pcm, int n_samples, int is_last,
                                               parakeet_sas_result** out, int* n_out);
/* NULL is a no-op. */
PARAKEET_API void parakeet_capi_sas_stream_free(parakeet_sas_stream* s);

/* A VAD stream on a VAD ctx (which it borrows: free the stream first). sample_rate 16000 or
 * 8000; options as above, mode "speech" only. One thread at a time per stream. */
typedef struct parakeet_vad_stream parakeet_vad_stream;
PARAKEET_API parakeet_vad_stream* parakeet_capi_vad_stream_begin(parakeet_ctx* ctx, int sample_rate,
                                                                 const char* options_json);
/* Feeds n_samples (any count; whole 512/256-sample chunks run, the rest waits; at is_last the
 * partial chunk is zero-padded). Returns {"frame_sec", "first_frame", "events": [{"type":
 * "start"|"end", "time"}], "probabilities"}: the events that became final, with the times of
 * the one-shot segments (they arrive after min_speech / min_pause + 2 * speech_pad). The
 * probabilities do not depend on how the audio is cut into feeds. A feed after is_last is an
 * error until _reset. Errors go to the stream's ctx. */
PARAKEET_API char* parakeet_capi_vad_stream_feed_json(parakeet_vad_stream* s, const float* pcm, int n_samples,
                                                      int is_last);
/* Back to the start (state, context and segments cleared). 0, or -1 for NULL. */
PARAKEET_API int parakeet_capi_vad_stream_reset(parakeet_vad_stream* s);
/* NULL is a no-op. */
PARAKEET_API void parakeet_capi_vad_stream_free(parakeet_vad_stream* s);

/* VAD-cut transcription (parakeet.cpp's shape): asr_ctx's model transcribes only the speech
 * that vad_ctx's Silero VAD finds. The speech segments (speech mode, options as
 * parakeet_capi_vad_pcm_json's; "mode" must be speech) are grouped in order into chunks of at
 * most "max_segment" seconds of speech (default 30), each chunk's segments laid end to end
 * and transcribed on its own; word and token times are mapped back onto the recording's
 * timeline. Returns the transcript document (parakeet_capi_transcribe_pcm_json's keys; a
 * token's "t" is its time on the recording) plus "segments": [{"start", "end"}], the speech
 * transcribed. Audio at a rate the VAD lacks (other than 8000 or a multiple of 16000) is
 * resampled to 16 kHz first. vad_ctx NULL or not a VAD model: an error (this library's ASR
 * models have no VAD head). Errors go to asr_ctx. One implementation with Python's
 * Context.transcribe(vad=) and the command line's --vad. */
PARAKEET_API char* parakeet_capi_transcribe_pcm_json_vad_with(parakeet_ctx* asr_ctx, parakeet_ctx* vad_ctx,
                                                              const float* samples, int n_samples, int sample_rate,
                                                              int decoder, const char* options_json);
/* The same for a WAV file (formats as the *_path transcription calls; channels averaged). */
PARAKEET_API char* parakeet_capi_transcribe_path_json_vad_with(parakeet_ctx* asr_ctx, parakeet_ctx* vad_ctx,
                                                               const char* wav_path, int decoder,
                                                               const char* options_json);
/* parakeet_capi_transcribe_pcm_json_vad_with with a progress callback, as the *_json_progress
 * functions take it (fn NULL: none): reports come from the VAD between blocks of a minute of
 * audio and then from each chunk's transcription (its encoder layers), as fractions of the one
 * request, so a non-zero return stops a VAD-cut transcription too. */
PARAKEET_API char* parakeet_capi_transcribe_pcm_json_vad_with_progress(parakeet_ctx* asr_ctx, parakeet_ctx* vad_ctx,
                                                                       const float* samples, int n_samples,
                                                                       int sample_rate, int decoder,
                                                                       const char* options_json,
                                                                       parakeet_progress_fn fn, void* user_data);
/* ---- Live speaker diarization (Sortformer streams; parakeet.cpp's ABI 7 family) -----------
 * A stream on a diarization ctx (which it borrows: free the stream first) runs NeMo's
 * streaming Sortformer (forward_streaming: chunks with left/right context, FIFO, speaker cache
 * with its compression) on 16 kHz mono audio as it arrives (docs/diarization_streaming.md).
 * Its probabilities, and so its segments, do not depend on how the audio is cut into feeds and
 * equal NeMo's forward_streaming on the same audio for models without mel normalisation
 * (normalize "NA", as NVIDIA's streaming checkpoints); a model that normalises per_feature is
 * refused (PARAKEET_ERROR_UNSUPPORTED: whole-clip statistics are not causal).
 * Segments are NeMo's binarisation at the file's onset/offset thresholds (no padding or
 * duration filters). A stream holds no backend between calls; one call at a time per stream
 * (calls are serialised). Errors go to the stream's ctx. */
typedef struct parakeet_diar_stream parakeet_diar_stream;
typedef struct parakeet_diar_segment {
    int speaker; /* 0-based, in order of arrival */
    float start; /* seconds, 2 decimals */
    float end;
} parakeet_diar_segment;

/* Latency presets: (chunk_len + chunk_right_context) x 80 ms. MODEL is the checkpoint's own
 * streaming configuration; the others use chunk/right context 6/7, 6/2 and 3/1 with FIFO 188,
 * speaker cache 188 and update period 144 (NeMo's model card for the v2 streaming model). */
#define PARAKEET_DIAR_LATENCY_MODEL 0
#define PARAKEET_DIAR_LATENCY_LOW 1       /* 1.04 s */
#define PARAKEET_DIAR_LATENCY_VERY_LOW 2  /* 0.64 s */
#define PARAKEET_DIAR_LATENCY_ULTRA_LOW 3 /* 0.32 s */

/* Begins a stream with the checkpoint's own streaming configuration (latency MODEL). NULL on
 * error (not a diarization ctx, a per_feature model). */
PARAKEET_API parakeet_diar_stream* parakeet_capi_diarize_stream_begin(parakeet_ctx* diar_ctx);
/* Begins a stream at a latency preset; outside 0..3: "unknown diarization latency mode N"
 * (PARAKEET_ERROR_INVALID_ARGUMENT). */
PARAKEET_API parakeet_diar_stream* parakeet_capi_diarize_stream_begin_latency(parakeet_ctx* diar_ctx, int latency);
/* Feeds n_samples of 16 kHz audio (0 is fine); is_last runs the rest and closes the open
 * segments. *out (may be NULL when there are none; free with parakeet_capi_free_diar_segments)
 * and *n_out get the segments that ended in this call, by start then speaker; out and n_out
 * may be NULL. Returns 0, or 1 with the error on the ctx: "stream already finished" after
 * is_last, "invalid samples buffer" (NULL with n_samples > 0, or n_samples < 0),
 * PARAKEET_ERROR_INVALID_AUDIO for non-finite samples. */
PARAKEET_API int parakeet_capi_diarize_stream_feed(parakeet_diar_stream* s, const float* pcm, int n_samples,
                                                  int is_last, parakeet_diar_segment** out, int* n_out);
/* The segments open now, their end = the time diarized so far. 0, or 1 (s NULL). */
PARAKEET_API int parakeet_capi_diarize_stream_active(parakeet_diar_stream* s, parakeet_diar_segment** out,
                                                    int* n_out);
/* Samples a chunk needs before it runs, (chunk_len + chunk_right_context) x 1280: the input
 * latency. 0 for NULL. */
PARAKEET_API int parakeet_capi_diarize_stream_chunk_samples(parakeet_diar_stream* s);
/* Seconds diarized so far (frames with known probabilities x 0.08). 0 for NULL. */
PARAKEET_API float parakeet_capi_diarize_stream_time(parakeet_diar_stream* s);
/* NULL is a no-op. */
PARAKEET_API void parakeet_capi_diarize_stream_free(parakeet_diar_stream* s);
/* Frees a segment array of feed / active (NULL is a no-op). */
PARAKEET_API void parakeet_capi_free_diar_segments(parakeet_diar_segment* segs);

/* ---- The speaker of each word (the speaker-attributed rules on their own; this library's) --
 * For words and diarization segments the caller holds (say, an ASR stream's words and a
 * diarization stream's segments): word i's speaker by the rule of the speaker-attributed calls
 * above (the most overlap, the first segment in the order given on a tie; else the nearest
 * segment within 0.5 s, the later on a tie; else -1; 1e-9 s tolerance), the very code
 * transcribe_and_diarize and sas_stream_feed run, into speakers_out[i]; and, when
 * utterances_out is not NULL, word i's utterance number into utterances_out[i] (0, 1, ... in
 * word order; an utterance is a run of one speaker's words with pauses of at most 0.5 s, as in
 * parakeet_sas_result). Segments are scanned in the order given (transcribe_and_diarize gives
 * them by start then speaker; a diarization stream's are its closed segments in the order they
 * ended, then its active ones); their float times are taken back to the 10 ms grid the
 * library's segments lie on. Word times are seconds, as doubles, on the segments' timeline.
 * Context-free and thread-safe: returns 0, or 1 with the reason in
 * parakeet_capi_thread_last_error() (PARAKEET_ERROR_INVALID_ARGUMENT): "invalid segments
 * buffer" (NULL with n_segments > 0, or n_segments < 0), "invalid words buffers" (a NULL
 * buffer with n_words > 0, or n_words < 0), a negative speaker, a time that is not finite, an
 * end before its start; nothing is written then. */
PARAKEET_API int parakeet_capi_word_speakers(const parakeet_diar_segment* segments, int n_segments,
                                             const double* word_starts, const double* word_ends, int n_words,
                                             int* speakers_out, int* utterances_out);

/* ---- ggml block formats ------------------------------------------------------------------ */

/* The tensor types of GGUF files, by ggml's type id: F32 0, F16 1, Q4_0 2, Q4_1 3, Q5_0 6,
 * Q5_1 7, Q8_0 8, Q4_K 12, Q5_K 13, Q6_K 14 (the ones this library reads). What a converter
 * needs to write and read them exactly as ggml does (docs/gguf.md, "Tensor types"). */

/* Bytes that n_values values of type ggml_type take; 0 when the type is not one of the above
 * or n_values is no whole number of its blocks (32 values; 256 for the K-quants). */
PARAKEET_API size_t parakeet_capi_ggml_row_bytes(int ggml_type, int64_t n_values);

/* Encodes src[0 .. n_values) as ggml_type into dst (dst_bytes >= the row bytes): byte for byte
 * what ggml's reference quantiser writes (ggml_quantize_chunk without an importance matrix);
 * F16 rounds to nearest even. Returns 0, or -1 with the reason in
 * parakeet_capi_thread_last_error(). Thread-safe. */
PARAKEET_API int parakeet_capi_ggml_quantize(int ggml_type, const float* src, int64_t n_values, void* dst,
                                             size_t dst_bytes);

/* Decodes n_values values of ggml_type from src (src_bytes >= the row bytes) into dst: bit for
 * bit what ggml's reference dequantiser computes. Returns 0 or -1 (as above). Thread-safe. */
PARAKEET_API int parakeet_capi_ggml_dequantize(int ggml_type, const void* src, size_t src_bytes,
                                               int64_t n_values, float* dst);

/* ---- Speaker encoder (parakeet.cpp ABI 9/10) --------------------------------------------- *
 * parakeet_capi_load() of a voice-detect.cpp `voicedetect` GGUF (SpeechBrain's ECAPA-TDNN;
 * `parakeet-cli convert` writes one from hyperparams.yaml + embedding_model.ckpt) gives a
 * context of kind PARAKEET_MODEL_KIND_SPEAKER. A file with no speaker embedding (an analysis
 * model) or another voicedetect architecture is refused at load. Every call below refuses a
 * context of another kind ("context holds an ASR model; a speaker model is needed here").
 * The calls on one speaker context are thread-safe; they run one at a time on its threads. */

/* The embedding size (192 for ECAPA-TDNN); -1 when ctx is NULL or not a speaker model. */
PARAKEET_API int parakeet_capi_speaker_dim(const parakeet_ctx* ctx);

/* The embedding of n_samples mono float samples at sample_rate (any rate > 0, resampled to
 * 16 kHz), L2-normalised. On success returns 0, *out_embedding is a malloc'd array of *out_dim
 * floats (free it with parakeet_capi_free_floats). On error returns nonzero with
 * *out_embedding NULL and *out_dim 0, the message on speaker ("no audio", "invalid sample
 * rate", "too little audio for the speaker encoder: ..."); NULL out pointers or speaker give
 * nonzero with no message. */
PARAKEET_API int parakeet_capi_speaker_embed_pcm(parakeet_ctx* speaker, const float* pcm, int n_samples,
                                                 int sample_rate, float** out_embedding, int* out_dim);

/* Frees an array returned by this library. NULL is a no-op. */
PARAKEET_API void parakeet_capi_free_floats(float* p);

/* The encoder's family fingerprint, "voicedetect:<arch>:<general.name>:<dim>" (e.g.
 * "voicedetect:ecapa_tdnn:speechbrain/spkrec-ecapa-voxceleb:192"); embeddings of one family
 * are comparable. NULL when speaker is NULL or not a speaker model. Valid while the context
 * lives. */
PARAKEET_API const char* parakeet_capi_speaker_encoder_family(const parakeet_ctx* speaker);

/* The encoder's weights fingerprint, "sha256:<64 hex>" of the model file's bytes (for a
 * bundle's voice component, "sha256:" + its source_sha256). NULL as above; valid while the
 * context lives. */
PARAKEET_API const char* parakeet_capi_speaker_identity(const parakeet_ctx* speaker);

/* The fingerprint warning of the last registry call that used this encoder ("" when the
 * registry's fingerprint matched): "other weights" or "no encoder fingerprint". NULL as above.
 * Valid until the next registry call with this encoder. */
PARAKEET_API const char* parakeet_capi_speaker_last_warning(const parakeet_ctx* speaker);

/* ---- Voice registry (parakeet.cpp ABI 9/10) ---------------------------------------------- *
 * Named speakers, each the sum of their L2-normalised embeddings; a query is matched by cosine
 * to each name's normalised sum. A name is given only when the best cosine is at least the
 * accept threshold (default 0.5) and, with two or more speakers, beats the second by at least
 * the margin (default 0.05).
 * Fingerprints: a registry remembers the encoder family and weights (parakeet_capi_speaker_
 * encoder_family / _identity) of its first fingerprinted embedding. A speaker model of another
 * family or dimension is refused; other weights of the same family give the warning "other
 * weights"; a registry without a fingerprint gives "no encoder fingerprint", or an error when
 * strict. Warnings are read with parakeet_capi_speaker_last_warning(speaker).
 * Errors of enroll and identify go on the speaker context; those of the other calls on the
 * registry (parakeet_capi_speaker_registry_last_error) and on the calling thread.
 * A registry is thread-safe: its calls run one at a time. */
typedef struct parakeet_speaker_registry parakeet_speaker_registry;

/* A new, empty registry (NULL only when out of memory). Free it with _registry_free. */
PARAKEET_API parakeet_speaker_registry* parakeet_capi_speaker_registry_new(void);
/* NULL is a no-op. */
PARAKEET_API void parakeet_capi_speaker_registry_free(parakeet_speaker_registry* reg);
/* The number of names; 0 for NULL. */
PARAKEET_API int parakeet_capi_speaker_registry_size(const parakeet_speaker_registry* reg);
/* The message of the registry's last failed call ("" after a success); "registry is NULL" for
 * NULL. Valid until the registry's next call. */
PARAKEET_API const char* parakeet_capi_speaker_registry_last_error(const parakeet_speaker_registry* reg);

/* Embeds the PCM (as parakeet_capi_speaker_embed_pcm) and adds it under name (a repeated name
 * averages). An empty registry takes the encoder's fingerprint. Returns 0, or nonzero with the
 * message on speaker ("speaker name is empty", the embedding's errors, fingerprint refusals);
 * NULL reg or speaker give nonzero with no message. */
PARAKEET_API int parakeet_capi_speaker_enroll(parakeet_speaker_registry* reg, parakeet_ctx* speaker,
                                              const char* name, const float* pcm, int n, int sample_rate);

/* Adds an embedding made elsewhere (normalised here; the first one fixes the dimension).
 * Returns 0, or nonzero with the message on the registry: "speaker name is empty", "no
 * embedding", "speaker embedding has N values, registry expects M", "speaker embedding is all
 * zero or not finite". */
PARAKEET_API int parakeet_capi_speaker_registry_add_embedding(parakeet_speaker_registry* reg, const char* name,
                                                              const float* embedding, int dim);

/* As _add_embedding, with the fingerprint of the encoder that made it: an empty registry takes
 * it; an embedding of another family, or a fingerprinted one into a registry whose embeddings
 * have none, is refused. A NULL or empty family makes it _add_embedding. */
PARAKEET_API int parakeet_capi_speaker_registry_add_embedding_fp(parakeet_speaker_registry* reg, const char* name,
                                                                 const float* embedding, int dim,
                                                                 const char* encoder_family,
                                                                 const char* encoder_weights);

/* The registry's fingerprint ("" when it has none); NULL for NULL. Valid until the registry's
 * next call. */
PARAKEET_API const char* parakeet_capi_speaker_registry_encoder_family(const parakeet_speaker_registry* reg);
PARAKEET_API const char* parakeet_capi_speaker_registry_encoder_weights(const parakeet_speaker_registry* reg);

/* strict != 0: a registry without a fingerprint is an error, not a warning, for enroll and
 * identify. */
PARAKEET_API void parakeet_capi_speaker_registry_set_strict(parakeet_speaker_registry* reg, int strict);

/* Writes the registry to path (parakeet.cpp's PKSR file: version 2 with a fingerprint, else 1),
 * through <path>.tmp renamed over path. Returns 0, or nonzero with the message on the registry. */
PARAKEET_API int parakeet_capi_speaker_registry_save(const parakeet_speaker_registry* reg, const char* path);

/* A registry read from a PKSR file; NULL when it cannot be read (unknown version, truncated,
 * trailing bytes, bad values), with the reason in parakeet_capi_thread_last_error(). */
PARAKEET_API parakeet_speaker_registry* parakeet_capi_speaker_registry_load(const char* path);

/* Embeds the PCM and matches it: {"name":"alice","score":0.7100} ("" when no name is accepted;
 * score is the best cosine, 0 for an empty registry), at the default threshold and margin. Free
 * with parakeet_capi_free_string. NULL on error, the message on speaker; NULL reg or speaker
 * give NULL with no message. */
PARAKEET_API char* parakeet_capi_speaker_identify_pcm_json(parakeet_speaker_registry* reg, parakeet_ctx* speaker,
                                                           const float* pcm, int n, int sample_rate);

/* Diarization with names (ABI 10): parakeet_capi_diarize_pcm's document (diar: a diarization
 * context) plus "names": {"0": {"name": "Ada", "score": 0.9752}, ...}, one entry per speaker slot
 * that has a segment. A slot's clean voice (its segments minus the moments another slot speaks,
 * in pieces of at least 0.2 s, the newest 30 s) is embedded with speaker and matched against reg
 * at accept_threshold and margin (0: the defaults 0.5 and 0.05); "" with score 0 means under
 * 2 s of clean voice (or reg NULL), "" with a score no accepted match. Errors: the PCM's and the
 * diarization's on diar ("invalid samples buffer" for n_samples 0), the encoder's and the
 * fingerprint checks' on speaker; NULL diar or speaker give NULL with no message. Free with
 * parakeet_capi_free_string. */
PARAKEET_API char* parakeet_capi_diarize_named_pcm_json(parakeet_ctx* diar, parakeet_ctx* speaker,
                                                        parakeet_speaker_registry* reg, const float* samples,
                                                        int n_samples, int sample_rate, float accept_threshold,
                                                        float margin);

/* parakeet_capi_transcribe_and_diarize_json's document (asr, diar) with names (ABI 9): "names"
 * at the top as in _diarize_named_pcm_json (default threshold and margin), and "name" /
 * "name_score" on every utterance and word ("" and 0 for speaker -1). Errors of the transcription
 * and diarization go where transcribe_and_diarize_json sends them, the speaker part's on speaker;
 * a NULL speaker gives NULL with no message. A NULL registry names nobody. */
PARAKEET_API char* parakeet_capi_transcribe_and_diarize_named_json(parakeet_ctx* asr, parakeet_ctx* diar,
                                                                   parakeet_ctx* speaker,
                                                                   parakeet_speaker_registry* registry,
                                                                   const float* samples, int n_samples,
                                                                   int sample_rate);

/* As _diarize_named_pcm_json (a NULL registry counts as empty), plus "speaker_profiles":
 * {"version":1,"encoder":{"identity":"sha256:...","dimension":192},"speakers":[{"speaker":0,
 * "clean_duration":3.00,"intervals":[{"start":0.00,"end":3.00}],"unavailable_reason":null,
 * "embedding":[...]}]}: per slot the clean voice used and its L2-normalised embedding, or the
 * reason there is none ("insufficient_clean_speech" under 2 s, "embedding_failed"), for an
 * application that offers "name this speaker" and stores the embedding
 * (parakeet_capi_speaker_registry_add_embedding_fp with the encoder's fingerprints). */
PARAKEET_API char* parakeet_capi_diarize_profiles_pcm_json(parakeet_ctx* diar, parakeet_ctx* speaker,
                                                           parakeet_speaker_registry* reg, const float* samples,
                                                           int n_samples, int sample_rate, float accept_threshold,
                                                           float margin);

/* ---- Errors and strings ------------------------------------------------------------------ */

/* The message of the most recently finished call on ctx, from any thread ("" if it
 * succeeded). Under concurrency another thread's call may have finished since yours: use
 * parakeet_capi_thread_last_error() for the exact error of your own call. The string is the
 * calling thread's own copy: it stays valid until this thread's next parakeet_capi_last_error()
 * call, whatever other threads do meanwhile (parakeet_capi_free(ctx) included).
 * ctx NULL returns a static "context is NULL". */
PARAKEET_API const char* parakeet_capi_last_error(parakeet_ctx* ctx);

/* The message of the calling thread's most recent call into the library ("" if it
 * succeeded). Thread-local and exact; valid until this thread's next call into the library. */
PARAKEET_API const char* parakeet_capi_thread_last_error(void);

/* Error codes: what kind of failure the last error was, beside its message.
 * PARAKEET_ERROR_NONE after a success. */
#define PARAKEET_ERROR_NONE 0
#define PARAKEET_ERROR_INVALID_ARGUMENT 1 /* a bad argument or option: NULL, out of range, unknown key */
#define PARAKEET_ERROR_INVALID_AUDIO 2    /* unreadable or unusable audio: bad file, NaN samples, bad rate */
#define PARAKEET_ERROR_BAD_MODEL 3        /* the file is not a model this library can run */
#define PARAKEET_ERROR_UNSUPPORTED 4      /* the wrong model kind, or a feature this model lacks */
#define PARAKEET_ERROR_CANCELLED 5        /* the progress callback asked to stop */
#define PARAKEET_ERROR_OUT_OF_MEMORY 6    /* an allocation failed */
#define PARAKEET_ERROR_INTERNAL 7         /* a failure inside the library (a bug: please report it) */

/* The code of the most recent call that finished on ctx (the message's code, same race as
 * parakeet_capi_last_error); PARAKEET_ERROR_INVALID_ARGUMENT for ctx NULL. */
PARAKEET_API int parakeet_capi_last_error_code(parakeet_ctx* ctx);

/* The code of the calling thread's last call (exact, like parakeet_capi_thread_last_error). */
PARAKEET_API int parakeet_capi_thread_last_error_code(void);

/* Frees a string returned by this library. NULL is a no-op. */
PARAKEET_API void parakeet_capi_free_string(char* s);

/* ---- Sound-event tagging (CED) --------------------------------------------------------------
 * A context loaded from a `ced` GGUF file (ced.cpp's schema, e.g. the mudler/ced-gguf files, or
 * `parakeet-cli convert` of a mispeech/ced-* checkpoint) has kind PARAKEET_MODEL_KIND_SOUND: a
 * CED audio tagger (AudioSet's 527 classes for the published models). The calls below refuse
 * other kinds (PARAKEET_ERROR_UNSUPPORTED: "context holds a <kind> model; a CED sound model is
 * needed here"), and the ASR calls refuse a sound ctx. The model is read-only: any number of
 * calls and streams use one ctx at once; each classification (a call, or a stream's window)
 * runs on the library's default backend (or the ctx's own, with the load option "threads"), so
 * concurrent ones take turns there. parakeet_capi_load_with's "isa" and "threads" apply. */

/* The number of classes the tagger scores; -1 when ctx is NULL or not a tagger. */
PARAKEET_API int parakeet_capi_num_classes(const parakeet_ctx* ctx);
/* The label of class `index` (borrowed from ctx, valid until parakeet_capi_free); NULL when ctx is
 * NULL or not a tagger, or index is out of range. */
PARAKEET_API const char* parakeet_capi_class_label(const parakeet_ctx* ctx, int index);

/* Classifies a clip of mono float PCM at the model's rate (16000; another rate is
 * PARAKEET_ERROR_INVALID_AUDIO "... resample first"; NaN or infinite samples too). The clip needs
 * at least one 16-frame patch (2400 samples, 0.15 s; shorter is PARAKEET_ERROR_INVALID_ARGUMENT).
 * A clip longer than 10.12 s is cut into 10.12 s chunks (the last one unpadded, dropped when
 * shorter than a patch) and their probabilities averaged, as ced.cpp does.
 * Returns a JSON array of the top_k classes (all of them for top_k <= 0), highest score first:
 *   [{"index":3,"label":"Doorbell","score":0.87}, ...]   (score: the sigmoid probability,
 * shortest exact float form). Free with parakeet_capi_free_string; NULL on error. */
PARAKEET_API char* parakeet_capi_sound_classify_pcm_json(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                         int sample_rate, int top_k);

/* ---- The sound stream (parakeet.cpp's ABI 8) ------------------------------------------------
 * Live sound events from a CED tagger ctx: 16 kHz mono PCM is fed in pieces of any size, and
 * every hop_sec the window of the last window_sec seconds (shorter at the start: 0-1, 0-2, 0-3,
 * then 1-4 s at the defaults) is classified. Per class:
 *   - it opens when its score reaches on_threshold: start = max(window start, window end - hop);
 *     its peak score is tracked while it is open;
 *   - it closes when its score falls below off_threshold: end = min(window start + hop, window
 *     end); a segment shorter than min_duration_sec is dropped;
 *   - is_last: a tail window ending at the last sample is classified when at least 0.16 s is
 *     unscored, then every open class closes at the end of the audio.
 * Each window's top_k classes are queued for parakeet_capi_sound_stream_drain_scores_json. One
 * stream is used by one thread at a time; the ctx must outlive its streams. */
typedef struct {
    int size; /* sizeof(parakeet_sound_opts), for versioning */
    float window_sec, hop_sec;
    float on_threshold, off_threshold, min_duration_sec;
    int top_k; /* per-window scores kept for the drain */
} parakeet_sound_opts;
/* Fills o with the defaults (and size): window 3 s, hop 1 s, on 0.4, off 0.3, min duration
 * 0.3 s, top_k 5. NULL is a no-op. */
PARAKEET_API void parakeet_capi_sound_opts_default(parakeet_sound_opts* o);

typedef struct {
    int class_index;
    const char* label;      /* borrowed from the tagger ctx */
    float start, end, peak; /* seconds from the stream's start; the highest score while open */
} parakeet_sound_segment;

typedef struct parakeet_sound_stream parakeet_sound_stream;

/* Starts a stream on a tagger ctx. o NULL gives the defaults; otherwise a field group is read only
 * when o->size covers it (window+hop, on+off+min_duration, top_k), the rest keeping its default.
 * NULL on error, with the message on the tagger: a non-tagger ctx (PARAKEET_ERROR_UNSUPPORTED), or
 * "invalid sound options: ..." unless hop >= 0.2, hop <= window <= 10, 0 <= off <= on <= 1,
 * min_duration >= 0 and 0 <= top_k <= the number of classes. */
PARAKEET_API parakeet_sound_stream* parakeet_capi_sound_stream_begin(parakeet_ctx* tagger, const parakeet_sound_opts* o);
/* Feeds n samples (n may be 0, e.g. with is_last) and sets *out / *n_out to the segments this call
 * closed (*out NULL when *n_out is 0; free with parakeet_capi_free_sound_segments). Returns 0, or
 * 1 on error: NULL s, out or n_out (no message), or with the message on the tagger ctx: "invalid
 * samples buffer" (pcm NULL with n > 0, or n < 0), "stream already finished" (a feed after
 * is_last), "sound scorer failed: ...", "out of memory". */
PARAKEET_API int parakeet_capi_sound_stream_feed(parakeet_sound_stream* s, const float* pcm, int n, int is_last,
                                                 parakeet_sound_segment** out, int* n_out);
/* The classes open now (end: the end of the last classified window), as feed hands them out.
 * Returns 0, or 1 for NULL s, out or n_out. */
PARAKEET_API int parakeet_capi_sound_stream_active(parakeet_sound_stream* s, parakeet_sound_segment** out, int* n_out);
/* The windows classified since the last drain, oldest first, and empties the queue:
 *   [{"start":0.000,"end":3.000,"tags":[{"index":i,"label":"...","score":0.8123}, ...]}, ...]
 * (top_k tags each, highest first; top_k 0 queues nothing). Free with parakeet_capi_free_string;
 * NULL for s NULL. */
PARAKEET_API char* parakeet_capi_sound_stream_drain_scores_json(parakeet_sound_stream* s);
/* Frees segments from feed or active. NULL is a no-op. */
PARAKEET_API void parakeet_capi_free_sound_segments(parakeet_sound_segment* segs);
/* Frees a stream. NULL is a no-op. */
PARAKEET_API void parakeet_capi_sound_stream_free(parakeet_sound_stream* s);

/* ---- The scene stream (parakeet.cpp's ABI 8, speaker fields ABI 9) ----
 * One live feed of who said what, by name, and what else is heard: diarization, speaker
 * naming, ASR and sound events on 16 kHz mono audio, in chunks of any size. Each part is
 * optional; the parts run in the order diarization, speaker, ASR, sound.
 *   - ASR commits words ending at least 1 s before the edge (the diarized time with a diar ctx,
 *     else the audio received, on whole seconds); text lags 3-5 s. Each word takes the speaker
 *     of the diarization segment it overlaps most (else the nearest within 0.5 s, else -1).
 *   - Speaker naming (a speaker ctx and a registry, with a diar ctx): each slot keeps its newest
 *     speaker_max_voice_sec of clean audio (not overlapped by another slot), embedded once it
 *     has speaker_min_voice_sec, then after every speaker_refresh_sec of new audio and at the
 *     end; an unknown result keeps the name, a different name must win twice in a row. A word
 *     committed before its slot was named keeps an empty name.
 * What commits, and when a slot is named, does not depend on how the audio is cut into feeds.
 * One thread at a time per stream; the contexts (and registry) must outlive it. */
typedef struct {
    int size;                       /* sizeof(parakeet_scene_opts), for versioning */
    int diar_latency;               /* PARAKEET_DIAR_LATENCY_*, used only with a diar ctx */
    parakeet_sound_opts sound;      /* used only with a tagger ctx (its own size versioning) */
    int flags;                      /* reserved, must be 0 */
    float speaker_accept_threshold; /* default 0.5 */
    float speaker_margin;           /* default 0.05 */
    float speaker_min_voice_sec;    /* default 2.0 */
    float speaker_refresh_sec;      /* default 3.0 */
    float speaker_max_voice_sec;    /* default 10.0 */
} parakeet_scene_opts;
/* Fills o with the defaults (and size): latency MODEL, the sound defaults, flags 0 and the
 * speaker defaults above. NULL is a no-op. A speaker field that is 0, or not covered by size,
 * keeps its default. */
PARAKEET_API void parakeet_capi_scene_opts_default(parakeet_scene_opts* o);

typedef struct parakeet_scene_stream parakeet_scene_stream;

/* parakeet_capi_scene_stream_begin_speaker(asr, diar, tagger, NULL, NULL, o). */
PARAKEET_API parakeet_scene_stream* parakeet_capi_scene_stream_begin(parakeet_ctx* asr, parakeet_ctx* diar,
                                                                     parakeet_ctx* tagger, const parakeet_scene_opts* o);
/* Starts a scene stream on the contexts given (each may be NULL; all NULL returns NULL with no
 * message). o NULL gives the defaults. NULL on error, with the message on the context concerned:
 * a context of the wrong kind (on it); "speaker identification needs a diarization model" or
 * "... needs a registry" (on speaker; a registry without a speaker is ignored); "scene flags
 * must be 0" (on the first context given); "unknown diarization latency mode" (on diar);
 * "invalid speaker options: ..." (on speaker: min_voice > 0, refresh > 0, max_voice >=
 * min_voice, accept in [-1, 1], margin >= 0); "registry holds N-value embeddings, this model
 * produces M" and the fingerprint refusals (on speaker); "invalid sound options: ..." (on
 * tagger). */
PARAKEET_API parakeet_scene_stream* parakeet_capi_scene_stream_begin_speaker(
    parakeet_ctx* asr, parakeet_ctx* diar, parakeet_ctx* tagger, parakeet_ctx* speaker,
    parakeet_speaker_registry* registry, const parakeet_scene_opts* o);
/* Feeds n samples (n may be 0, e.g. with is_last) and returns what this call produced (free
 * with parakeet_capi_free_string), times %.3f, scores %.4f:
 *   {"t":0.600,"names":{"0":{"name":"Ada","score":0.9752}},
 *    "utterances":[{"speaker":0,"name":"Ada","name_score":0.9752,"text":"...","start":0.400,
 *                   "end":1.600,"conf":0.9800}],
 *    "words":[{"text":"mister","start":0.400,"end":0.600,"conf":0.9900,"speaker":0,"name":"Ada",
 *              "name_score":0.9752}],
 *    "speakers":[{"speaker":0,"name":"Ada","name_score":0.9752,"start":0.000,"end":0.600}],
 *    "sounds":[{"index":i,"label":"...","start":24.000,"end":30.000,"peak":0.8600}],
 *    "active":{"speakers":[{"speaker":0,"name":"Ada","name_score":0.9752,"start":0.600}],
 *              "sounds":[... with "end": t ...]}}
 * t: seconds fed so far. names / name / name_score appear only with a speaker part ("names":{}
 * at first; "" and 0 for a slot not named). words, utterances (same-speaker runs with gaps
 * <= 0.5 s), speakers and sounds hold what committed or closed in this call; active what is open
 * now. Absent parts give empty arrays. NULL on error, the message in
 * parakeet_capi_scene_stream_last_error: "invalid samples buffer", a non-finite sample, "stream
 * already finished", or a part's failure (also on that part's context). After an error, end the
 * stream: the parts' times may disagree. */
PARAKEET_API char* parakeet_capi_scene_stream_feed_json(parakeet_scene_stream* s, const float* pcm, int n,
                                                        int is_last);
/* The sound part's classified windows since the last drain, as
 * parakeet_capi_sound_stream_drain_scores_json gives them; "[]" without a tagger. NULL for s NULL. */
PARAKEET_API char* parakeet_capi_scene_stream_drain_scores_json(parakeet_scene_stream* s);
/* The message of the stream's last failed call ("" after a success; "" for s NULL). */
PARAKEET_API const char* parakeet_capi_scene_stream_last_error(parakeet_scene_stream* s);
/* Frees a stream. NULL is a no-op. */
PARAKEET_API void parakeet_capi_scene_stream_free(parakeet_scene_stream* s);

#ifdef __cplusplus
}
#endif

#endif /* PARAKEET_CAPI_H */
