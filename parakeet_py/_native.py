"""Locating and loading ``libparakeet`` through cffi (ABI mode, no compiler needed).

Besides loading, this module holds the rules every call into the library follows, in one
place:

* a ``char*`` result is copied into a Python ``str`` and released with
  ``parakeet_capi_free_string`` at once (:func:`take_string`);
* a failed call (NULL, a non-zero status, a negative count) raises at once, on the same thread,
  before anything else touches the library: :func:`raise_last_error` reads
  ``parakeet_capi_thread_last_error()`` and ``parakeet_capi_thread_last_error_code()`` and raises
  the :class:`~parakeet_py.errors.ParakeetError` subclass of that code. The message and code are
  exact for the calling thread even when other threads fail at the same time. The checks
  (:func:`string_result`, :func:`check_pointer`, :func:`check_status`, :func:`check_count`) are
  the only places that do it.

``CDEF`` is the one cffi declaration of the C ABI in this repository (the benchmarks use it
too); tests/python/test_native.py checks every signature and constant against the header.

cffi releases the GIL around every C call, so long transcriptions do not block other Python
threads (tests/python/test_context_threads.py checks it); a progress callback re-acquires it
only for the time the Python function runs.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, NoReturn, Optional, Tuple

import cffi

from .errors import InternalError, error_for_code

# Declarations of the C ABI used from Python, copied from libparakeet/include/parakeet_capi.h
# (tests/python/test_native.py checks that each signature here is the header's).
CDEF = """
typedef struct parakeet_ctx parakeet_ctx;

int parakeet_capi_abi_version(void);

parakeet_ctx* parakeet_capi_load(const char* gguf_path);
parakeet_ctx* parakeet_capi_load_with(const char* gguf_path, const char* options_json);
int parakeet_capi_model_kind(const parakeet_ctx* ctx);
const char* parakeet_capi_load_error(void);
parakeet_ctx* parakeet_capi_load_component(const char* gguf_path, const char* component);
char* parakeet_capi_bundle_components_json(const char* gguf_path);
void parakeet_capi_free(parakeet_ctx* ctx);
char* parakeet_capi_model_info_json(parakeet_ctx* ctx);

char* parakeet_capi_transcribe_pcm(parakeet_ctx* ctx, const float* samples,
                                   int n_samples, int sample_rate, int decoder);
char* parakeet_capi_transcribe_path(parakeet_ctx* ctx, const char* wav_path, int decoder);
char* parakeet_capi_transcribe_pcm_json(parakeet_ctx* ctx, const float* samples,
                                        int n_samples, int sample_rate, int decoder);
char* parakeet_capi_transcribe_path_json(parakeet_ctx* ctx, const char* wav_path, int decoder);
char* parakeet_capi_transcribe_pcm_lang(parakeet_ctx* ctx, const float* samples, int n_samples,
                                        int sample_rate, int decoder, const char* target_lang);
char* parakeet_capi_transcribe_pcm_batch_json_lang(parakeet_ctx* ctx, const float* samples_concat,
                                                   const int* n_samples, int n_clips,
                                                   int sample_rate, int decoder,
                                                   const char* target_lang);

typedef int (*parakeet_progress_fn)(float fraction, void* user_data);
char* parakeet_capi_transcribe_pcm_json_progress(parakeet_ctx* ctx, const float* samples,
                                                 int n_samples, int sample_rate, int decoder,
                                                 parakeet_progress_fn fn, void* user_data);
char* parakeet_capi_transcribe_path_json_progress(parakeet_ctx* ctx, const char* wav_path,
                                                  int decoder, parakeet_progress_fn fn,
                                                  void* user_data);
char* parakeet_capi_transcribe_pcm_json_lang_progress(parakeet_ctx* ctx, const float* samples,
                                                      int n_samples, int sample_rate, int decoder,
                                                      const char* target_lang,
                                                      parakeet_progress_fn fn, void* user_data);

char* parakeet_capi_transcribe_path_nbest_json(parakeet_ctx* ctx, const char* wav_path, int beam_size,
                                               int nbest, int score_norm, const char* target_lang);
char* parakeet_capi_transcribe_pcm_nbest_json(parakeet_ctx* ctx, const float* samples, int n_samples,
                                              int sample_rate, int beam_size, int nbest, int score_norm,
                                              const char* target_lang);
char* parakeet_capi_transcribe_pcm_nbest_json_progress(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                       int sample_rate, int beam_size, int nbest, int score_norm,
                                                       parakeet_progress_fn fn, void* user_data);

typedef struct parakeet_context_graph parakeet_context_graph;
parakeet_context_graph* parakeet_capi_context_create_text(parakeet_ctx* ctx, const char** phrases,
                                                          const float* weights, int n_phrases, float score);
void parakeet_capi_context_free(parakeet_context_graph* graph);
void parakeet_capi_context_info(const parakeet_context_graph* graph, int* n_states, int* n_arcs,
                                int* n_phrases, double* build_ms);
char* parakeet_capi_transcribe_pcm_contextual_json(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                   int sample_rate, const parakeet_context_graph* graph,
                                                   int acoustic_top_m, const char* lang);

int parakeet_capi_transcribe_pcm_logits(parakeet_ctx* ctx, const float* samples, int n_samples,
                                        int sample_rate, float** out_logits, int* out_T,
                                        int* out_vocab_plus_1);
void parakeet_capi_free_logits(float* logits);

int parakeet_capi_set_attention_context(parakeet_ctx* ctx, int left, int right);

int parakeet_capi_set_concurrency(parakeet_ctx* ctx, int backends, int threads_each);
long long parakeet_capi_pool_working_set_bytes(parakeet_ctx* ctx);
int parakeet_capi_set_request_batching(parakeet_ctx* ctx, int max_batch, int max_wait_ms);
char* parakeet_capi_request_batching_stats_json(parakeet_ctx* ctx);
int parakeet_capi_set_threads(int n_threads);

typedef struct parakeet_stream parakeet_stream;
typedef struct parakeet_stream_event {
    int token;
    int is_eob;
    int encoder_frame;
    float time_sec;
} parakeet_stream_event;
parakeet_stream* parakeet_capi_stream_begin(parakeet_ctx* ctx);
parakeet_stream* parakeet_capi_stream_begin_lang(parakeet_ctx* ctx, const char* target_lang);
parakeet_stream* parakeet_capi_stream_begin_with(parakeet_ctx* ctx, const char* options_json);
char* parakeet_capi_stream_feed(parakeet_stream* s, const float* pcm, int n_samples, int* eou_out);
char* parakeet_capi_stream_finalize(parakeet_stream* s);
char* parakeet_capi_stream_feed_json(parakeet_stream* s, const float* pcm, int n_samples);
char* parakeet_capi_stream_finalize_json(parakeet_stream* s);
int parakeet_capi_stream_drain_events(parakeet_stream* s, parakeet_stream_event** out_events);
void parakeet_capi_free_events(parakeet_stream_event* events);
void parakeet_capi_stream_free(parakeet_stream* s);
typedef struct parakeet_stream_group parakeet_stream_group;
parakeet_stream_group* parakeet_capi_stream_group_new(parakeet_ctx* ctx, int max_batch, int max_wait_ms);
int parakeet_capi_stream_group_join(parakeet_stream_group* g, parakeet_stream* s);
int parakeet_capi_stream_group_leave(parakeet_stream_group* g, parakeet_stream* s);
int parakeet_capi_stream_group_size(parakeet_stream_group* g);
char* parakeet_capi_stream_group_stats_json(parakeet_stream_group* g);
void parakeet_capi_stream_group_free(parakeet_stream_group* g);

char* parakeet_capi_vad_pcm_json(parakeet_ctx* ctx, const float* samples, int n_samples,
                                 int sample_rate, const char* options_json);
char* parakeet_capi_vad_path_json(parakeet_ctx* ctx, const char* wav_path, const char* options_json);
typedef struct parakeet_vad_stream parakeet_vad_stream;
parakeet_vad_stream* parakeet_capi_vad_stream_begin(parakeet_ctx* ctx, int sample_rate,
                                                    const char* options_json);
char* parakeet_capi_vad_stream_feed_json(parakeet_vad_stream* s, const float* pcm, int n_samples,
                                         int is_last);
int parakeet_capi_vad_stream_reset(parakeet_vad_stream* s);
void parakeet_capi_vad_stream_free(parakeet_vad_stream* s);
char* parakeet_capi_transcribe_pcm_json_vad_with(parakeet_ctx* asr_ctx, parakeet_ctx* vad_ctx, const float* samples,
                                                 int n_samples, int sample_rate, int decoder,
                                                 const char* options_json);
char* parakeet_capi_transcribe_path_json_vad_with(parakeet_ctx* asr_ctx, parakeet_ctx* vad_ctx, const char* wav_path,
                                                  int decoder, const char* options_json);
char* parakeet_capi_transcribe_pcm_json_vad_with_progress(parakeet_ctx* asr_ctx, parakeet_ctx* vad_ctx,
                                                          const float* samples, int n_samples, int sample_rate,
                                                          int decoder, const char* options_json,
                                                          parakeet_progress_fn fn, void* user_data);

char* parakeet_capi_diarize_pcm_with(parakeet_ctx* ctx, const float* samples, int n_samples,
                                     int sample_rate, const char* options_json);
char* parakeet_capi_diarize_pcm_with_progress(parakeet_ctx* ctx, const float* samples, int n_samples,
                                              int sample_rate, const char* options_json, parakeet_progress_fn fn,
                                              void* user_data);
char* parakeet_capi_transcribe_and_diarize_json(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx,
                                                const float* samples, int n_samples, int sample_rate);
char* parakeet_capi_transcribe_and_diarize_json_with_progress(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx,
                                                              const float* samples, int n_samples, int sample_rate,
                                                              parakeet_progress_fn fn, void* user_data);
typedef struct parakeet_sas_result {
    int speaker;
    char* text;
    float start;
    float end;
    float conf;
} parakeet_sas_result;
void parakeet_capi_free_sas_results(parakeet_sas_result* results, int n);
typedef struct parakeet_sas_stream parakeet_sas_stream;
parakeet_sas_stream* parakeet_capi_sas_stream_begin_latency(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx,
                                                            int latency);
int parakeet_capi_sas_stream_feed(parakeet_sas_stream* s, const float* pcm, int n_samples, int is_last,
                                  parakeet_sas_result** out, int* n_out);
void parakeet_capi_sas_stream_free(parakeet_sas_stream* s);

typedef struct parakeet_diar_stream parakeet_diar_stream;
typedef struct parakeet_diar_segment {
    int speaker;
    float start;
    float end;
} parakeet_diar_segment;
parakeet_diar_stream* parakeet_capi_diarize_stream_begin_latency(parakeet_ctx* diar_ctx, int latency);
int parakeet_capi_diarize_stream_feed(parakeet_diar_stream* s, const float* pcm, int n_samples,
                                      int is_last, parakeet_diar_segment** out, int* n_out);
int parakeet_capi_diarize_stream_active(parakeet_diar_stream* s, parakeet_diar_segment** out, int* n_out);
int parakeet_capi_diarize_stream_chunk_samples(parakeet_diar_stream* s);
float parakeet_capi_diarize_stream_time(parakeet_diar_stream* s);
void parakeet_capi_diarize_stream_free(parakeet_diar_stream* s);
void parakeet_capi_free_diar_segments(parakeet_diar_segment* segs);

int parakeet_capi_word_speakers(const parakeet_diar_segment* segments, int n_segments,
                                const double* word_starts, const double* word_ends, int n_words,
                                int* speakers_out, int* utterances_out);

size_t parakeet_capi_ggml_row_bytes(int ggml_type, int64_t n_values);
int parakeet_capi_ggml_quantize(int ggml_type, const float* src, int64_t n_values, void* dst,
                                size_t dst_bytes);
int parakeet_capi_ggml_dequantize(int ggml_type, const void* src, size_t src_bytes,
                                  int64_t n_values, float* dst);

int parakeet_capi_num_classes(const parakeet_ctx* ctx);
const char* parakeet_capi_class_label(const parakeet_ctx* ctx, int index);
char* parakeet_capi_sound_classify_pcm_json(parakeet_ctx* ctx, const float* samples, int n_samples,
                                            int sample_rate, int top_k);
typedef struct {
    int size;
    float window_sec, hop_sec;
    float on_threshold, off_threshold, min_duration_sec;
    int top_k;
} parakeet_sound_opts;
void parakeet_capi_sound_opts_default(parakeet_sound_opts* o);
typedef struct {
    int class_index;
    const char* label;
    float start, end, peak;
} parakeet_sound_segment;
typedef struct parakeet_sound_stream parakeet_sound_stream;
parakeet_sound_stream* parakeet_capi_sound_stream_begin(parakeet_ctx* tagger, const parakeet_sound_opts* o);
int parakeet_capi_sound_stream_feed(parakeet_sound_stream* s, const float* pcm, int n, int is_last,
                                    parakeet_sound_segment** out, int* n_out);
int parakeet_capi_sound_stream_active(parakeet_sound_stream* s, parakeet_sound_segment** out, int* n_out);
char* parakeet_capi_sound_stream_drain_scores_json(parakeet_sound_stream* s);
void parakeet_capi_free_sound_segments(parakeet_sound_segment* segs);
void parakeet_capi_sound_stream_free(parakeet_sound_stream* s);
int parakeet_capi_speaker_dim(const parakeet_ctx* ctx);
int parakeet_capi_speaker_embed_pcm(parakeet_ctx* speaker, const float* pcm, int n_samples,
                                    int sample_rate, float** out_embedding, int* out_dim);
void parakeet_capi_free_floats(float* p);
const char* parakeet_capi_speaker_encoder_family(const parakeet_ctx* speaker);
const char* parakeet_capi_speaker_identity(const parakeet_ctx* speaker);
const char* parakeet_capi_speaker_last_warning(const parakeet_ctx* speaker);
typedef struct parakeet_speaker_registry parakeet_speaker_registry;
parakeet_speaker_registry* parakeet_capi_speaker_registry_new(void);
void parakeet_capi_speaker_registry_free(parakeet_speaker_registry* reg);
int parakeet_capi_speaker_registry_size(const parakeet_speaker_registry* reg);
const char* parakeet_capi_speaker_registry_last_error(const parakeet_speaker_registry* reg);
int parakeet_capi_speaker_enroll(parakeet_speaker_registry* reg, parakeet_ctx* speaker,
                                 const char* name, const float* pcm, int n, int sample_rate);
int parakeet_capi_speaker_registry_add_embedding_fp(parakeet_speaker_registry* reg, const char* name,
                                                    const float* embedding, int dim,
                                                    const char* encoder_family, const char* encoder_weights);
const char* parakeet_capi_speaker_registry_encoder_family(const parakeet_speaker_registry* reg);
const char* parakeet_capi_speaker_registry_encoder_weights(const parakeet_speaker_registry* reg);
void parakeet_capi_speaker_registry_set_strict(parakeet_speaker_registry* reg, int strict);
int parakeet_capi_speaker_registry_save(const parakeet_speaker_registry* reg, const char* path);
parakeet_speaker_registry* parakeet_capi_speaker_registry_load(const char* path);
char* parakeet_capi_speaker_identify_pcm_json(parakeet_speaker_registry* reg, parakeet_ctx* speaker,
                                              const float* pcm, int n, int sample_rate);
char* parakeet_capi_diarize_named_pcm_json(parakeet_ctx* diar, parakeet_ctx* speaker,
                                           parakeet_speaker_registry* reg, const float* samples,
                                           int n_samples, int sample_rate, float accept_threshold,
                                           float margin);
char* parakeet_capi_transcribe_and_diarize_named_json(parakeet_ctx* asr, parakeet_ctx* diar,
                                                      parakeet_ctx* speaker, parakeet_speaker_registry* registry,
                                                      const float* samples, int n_samples, int sample_rate);
char* parakeet_capi_diarize_profiles_pcm_json(parakeet_ctx* diar, parakeet_ctx* speaker,
                                              parakeet_speaker_registry* reg, const float* samples,
                                              int n_samples, int sample_rate, float accept_threshold,
                                              float margin);

typedef struct {
    int size;
    int diar_latency;
    parakeet_sound_opts sound;
    int flags;
    float speaker_accept_threshold;
    float speaker_margin;
    float speaker_min_voice_sec;
    float speaker_refresh_sec;
    float speaker_max_voice_sec;
} parakeet_scene_opts;
void parakeet_capi_scene_opts_default(parakeet_scene_opts* o);
typedef struct parakeet_scene_stream parakeet_scene_stream;
parakeet_scene_stream* parakeet_capi_scene_stream_begin_speaker(parakeet_ctx* asr, parakeet_ctx* diar,
                                                                parakeet_ctx* tagger, parakeet_ctx* speaker,
                                                                parakeet_speaker_registry* registry,
                                                                const parakeet_scene_opts* o);
char* parakeet_capi_scene_stream_feed_json(parakeet_scene_stream* s, const float* pcm, int n, int is_last);
char* parakeet_capi_scene_stream_drain_scores_json(parakeet_scene_stream* s);
const char* parakeet_capi_scene_stream_last_error(parakeet_scene_stream* s);
void parakeet_capi_scene_stream_free(parakeet_scene_stream* s);
const char* parakeet_capi_last_error(parakeet_ctx* ctx);
const char* parakeet_capi_thread_last_error(void);
int parakeet_capi_last_error_code(parakeet_ctx* ctx);
int parakeet_capi_thread_last_error_code(void);
void parakeet_capi_free_string(char* s);
"""

# The ABI version this binding was written for.
EXPECTED_ABI_VERSION = 10

# Decoder selection values of the C ABI (PARAKEET_DECODER_*).
DECODER_DEFAULT = 0
DECODER_CTC = 1
DECODER_TRANSDUCER = 2

# What a context holds (PARAKEET_MODEL_KIND_*).
MODEL_KIND_NONE = 0
MODEL_KIND_ASR = 1
MODEL_KIND_DIARIZATION = 2
MODEL_KIND_SOUND = 3
MODEL_KIND_SPEAKER = 4
MODEL_KIND_VAD = 5

_LIB_ENV = "PARAKEET_LIBRARY"
_lock = threading.Lock()
_loaded: Optional[Tuple[Any, Any]] = None


def library_path() -> Path:
    """Path of the libparakeet to load: $PARAKEET_LIBRARY if set, else the bundled one."""
    override = os.environ.get(_LIB_ENV)
    if override:
        return Path(override)
    return Path(__file__).with_name("libparakeet.so")


def load() -> Tuple[Any, Any]:
    """Return ``(ffi, lib)``, loading the library on first use (thread-safe)."""
    global _loaded
    with _lock:
        if _loaded is None:
            path = library_path()
            if not path.exists():
                raise OSError(
                    f"libparakeet not found at {path}; reinstall the package or set "
                    f"{_LIB_ENV} to a built libparakeet.so"
                )
            ffi = cffi.FFI()
            ffi.cdef(CDEF)
            lib = ffi.dlopen(str(path))
            version = lib.parakeet_capi_abi_version()
            if version != EXPECTED_ABI_VERSION:
                raise OSError(
                    f"{path} has C ABI version {version}, this binding needs "
                    f"{EXPECTED_ABI_VERSION}"
                )
            _loaded = (ffi, lib)
        return _loaded


def load_or_raise() -> Tuple[Any, Any]:
    """Like :func:`load`, but a missing or mismatched library is an
    :class:`~parakeet_py.errors.InternalError` (a :class:`~parakeet_py.errors.ParakeetError`)."""
    try:
        return load()
    except OSError as e:
        raise InternalError(str(e)) from e


def last_error() -> str:
    """The calling thread's last error message (call it right after the failing call)."""
    ffi, lib = load()
    return ffi.string(lib.parakeet_capi_thread_last_error()).decode("utf-8", "replace")


def raise_last_error(message: Optional[str] = None) -> NoReturn:
    """Raise the calling thread's last error (call it right after the failing call): the
    :class:`~parakeet_py.errors.ParakeetError` subclass of its code, with the library's message
    (or ``message`` when the caller has a better one, e.g. ``parakeet_capi_load_error()``'s)."""
    _, lib = load()
    code = int(lib.parakeet_capi_thread_last_error_code())
    raise error_for_code(code, last_error() if message is None else message)


def c_string(text: Optional[str]) -> Any:
    """An optional ``const char*`` argument: NULL for None, else the UTF-8 bytes (which live for
    the call they are passed to)."""
    return load()[0].NULL if text is None else text.encode("utf-8")


def string_result(ptr: Any) -> str:
    """A ``char*`` result: NULL raises the thread's last error; otherwise its text (freed)."""
    if ptr == load()[0].NULL:
        raise_last_error()
    return take_string(ptr)


def check_pointer(ptr: Any) -> Any:
    """A handle result (a context, stream or graph): NULL raises the thread's last error."""
    if ptr == load()[0].NULL:
        raise_last_error()
    return ptr


def check_status(status: int) -> None:
    """A status result: non-zero raises the thread's last error."""
    if status != 0:
        raise_last_error()


def check_count(count: int) -> int:
    """A count result: negative raises the thread's last error; otherwise the count."""
    if count < 0:
        raise_last_error()
    return int(count)


def free_in_finalizer(ptr: Any, free_function: str) -> None:
    """From a ``__del__``: free a library handle the object still holds (NULL/None is a no-op).
    At interpreter shutdown the library may already be gone; that error is swallowed, as a
    finalizer must not raise."""
    if ptr is None:
        return
    try:
        getattr(load()[1], free_function)(ptr)
    except Exception:
        pass


def take_string(ptr: Any) -> str:
    """Copy a library-owned ``char*`` into a ``str`` and free it. ``ptr`` must not be NULL."""
    ffi, lib = load()
    try:
        return ffi.string(ptr).decode("utf-8", "replace")
    finally:
        lib.parakeet_capi_free_string(ptr)


def set_threads(n_threads: int) -> int:
    """Threads of the process-wide backend (``n <= 0``: the default); returns the new count."""
    _, lib = load_or_raise()
    return int(lib.parakeet_capi_set_threads(int(n_threads)))
