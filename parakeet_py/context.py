"""``Context``: one loaded model, shared by any number of Python threads.

A context wraps a ``parakeet_ctx``. Audio is decoded, mixed down and resampled in Python
(:mod:`.audio`), then handed to ``parakeet_capi_transcribe_pcm[_json]``; the GIL is released
for the whole C call, so threads transcribing on a context with ``concurrency`` K > 1 really
run K requests at once (each on its own backend of the library's pool, against one copy of
the weights). Requests beyond K wait inside the library, first come first served.

Closing waits for the requests already running on the context, then frees it; any later
call raises :class:`~parakeet_py.errors.InvalidArgument`.

Every failure raises the :class:`~parakeet_py.errors.ParakeetError` subclass of its error code
(``parakeet_py.errors``): through :mod:`._native`'s checks for the library's failures, directly
for the ones found here.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union, overload

import numpy as np

from . import _native, hotwords as _hotwords, nbest as _nbest
from .batch_call import transcribe_sources
from .bundle import component_load_option, component_of_kind
from .decoders import decoder_code
from .hotwords import Hotwords
from .audio.prepare import AudioSource, request_samples
from .errors import InvalidArgument, ParakeetError
from .hub import resolve_model
from .nbest import Hypothesis
from .owned_handle import SharedModel
from .progress import ProgressCallback, call_with_progress, check_progress
from .speakers.diarize import AUDIO_RATE as DIARIZER_RATE, Diarizer
from .speakers.encoder import SpeakerEncoder
from .speakers.registry import VoiceRegistry
from .speakers.scene_stream import SceneStream, begin as begin_scene_stream
from .speakers.speaker_stream import SpeakerStream, begin as begin_speaker_stream
from .stream import Stream, begin as begin_stream, check_language, stream_options
from .stream_group import StreamGroup, new as new_stream_group
from .transcript import Attention, Transcript, attention_from_json

def attention_pair(attention: Attention) -> Tuple[int, int]:
    """"auto", "full" or ``(left, right)`` (both positive) → the C ABI's (left, right) pair."""
    if attention == "auto":
        return (0, 0)
    if attention == "full":
        return (-1, -1)
    if isinstance(attention, (tuple, list)) and len(attention) == 2 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in attention):
        return (int(attention[0]), int(attention[1]))
    raise InvalidArgument(f"attention must be 'auto', 'full' or (left, right) with both > 0, not {attention!r}")


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidArgument(f"{what} must be a positive integer, not {value!r}")
    return int(value)


#: The kernel levels a context may be asked for (``isa``): scalar, then x86-64's and AArch64's,
#: each architecture's lowest first. A CPU has scalar and levels of its own architecture only.
ISA_LEVELS = ("scalar", "avx2", "avx512", "neon", "dotprod", "i8mm")


def load_options(*, attention: Optional[Attention] = None, isa: Optional[str] = None, bf16: Optional[bool] = None,
                 q8_all: Optional[bool] = None, q8_subsampling: Optional[bool] = None) -> Dict[str, Any]:
    """The options object of ``parakeet_capi_load_with``: only the keys given (``None`` leaves the
    library's default, which its environment variable sets). A value of the wrong type or an
    unknown level raises :class:`~parakeet_py.errors.InvalidArgument` before anything loads."""
    options: Dict[str, Any] = {}
    if isa is not None:
        if not isinstance(isa, str) or isa.lower() not in ISA_LEVELS:
            raise InvalidArgument(f"isa must be one of {', '.join(ISA_LEVELS)}, not {isa!r}")
        options["isa"] = isa.lower()
    if attention is not None:
        pair = attention_pair(attention)
        options["attention"] = attention if isinstance(attention, str) else list(pair)
    for key, value in (("q8_all", q8_all), ("q8_subsampling", q8_subsampling), ("bf16", bf16)):
        if value is not None:
            if not isinstance(value, (bool, np.bool_)):
                raise InvalidArgument(f"{key} must be True or False, not {value!r}")
            options[key] = bool(value)
    return options


class Context(SharedModel):
    """A loaded Parakeet model (GGUF file) that transcribes audio, thread-safely.

    ``concurrency``: how many requests run at once (K backends of the library's pool; 1 uses
    the process-wide backend shared by every context without a pool).
    ``threads``: with ``concurrency`` 1, sets the thread count of that process-wide backend
    (``parakeet_capi_set_threads``: it affects every such context in the process); with K > 1,
    the compute threads of each backend (``None``: the default budget, physical cores or
    ``$PARAKEET_THREADS``, divided by K). Results never depend on either setting.
    ``attention``: "auto" (full attention up to ``info["auto_full_max_frames"]`` encoder frames,
    local [128, 128] above), "full", or ``(left, right)`` for local attention with that context
    (both > 0); ``None`` keeps the library's default (``$PARAKEET_ATT_CONTEXT``, else auto).
    Change it later with :attr:`attention`.

    Load options (``parakeet_capi_load_with``; ``None``, the default, leaves each to the library,
    whose environment variable in parentheses sets it; docs/python.md):
    ``isa``: "scalar", "avx2" or "avx512" (x86-64), "neon", "dotprod" or "i8mm" (AArch64), the kernel
    level (at most the CPU's; ``$PARAKEET_CPU``);
    ``bf16``: round an f32/f16 model's encoder matrices to bfloat16 (needs AVX512_BF16;
    ``$PARAKEET_BF16``); ``q8_all``: a quantised model quantises its remaining F32 matrices to
    Q8_0 at load (default True; ``$PARAKEET_Q8_ALL``); ``q8_subsampling``: ... and its subsampling's pointwise
    convolutions (default False; ``$PARAKEET_Q8_SUBSAMPLING``).

    ``component``: which component of a bundle to load (docs/bundles.md); None: a plain file, or
    the bundle's default (its only asr component).

    Raises :class:`~parakeet_py.errors.BadModel` when the file is not a model this library can
    run, :class:`~parakeet_py.errors.InvalidArgument` for a bad option (a level above the CPU's
    included), each with the library's message.
    """

    _CLOSED = "the context is closed"

    def __init__(self, model_path: Union[str, "os.PathLike[str]"], *, concurrency: int = 1,
                 threads: Optional[int] = None, attention: Optional[Attention] = None, isa: Optional[str] = None,
                 bf16: Optional[bool] = None, q8_all: Optional[bool] = None,
                 q8_subsampling: Optional[bool] = None, component: Optional[str] = None,
                 request_batching: Optional[Tuple[int, int]] = None) -> None:
        super().__init__()
        self._concurrency = 1
        concurrency = _positive_int(concurrency, "concurrency")
        if threads is not None:
            threads = _positive_int(threads, "threads")
        options = load_options(attention=attention, isa=isa, bf16=bf16, q8_all=q8_all,
                               q8_subsampling=q8_subsampling)  # refused before loading the model
        if not isinstance(model_path, (str, os.PathLike)):
            raise InvalidArgument(f"model_path must be a path, not a {type(model_path).__name__}")
        self.model_path: str = resolve_model(model_path, kind="asr")
        ffi, lib = _native.load_or_raise()
        #: The load options this context was loaded with (only the keys given).
        self.load_options: Dict[str, Any] = options
        component = component_of_kind(self.model_path, "asr", component)
        request = dict(options, **component_load_option(component))
        ptr = lib.parakeet_capi_load_with(self.model_path.encode("utf-8"), json.dumps(request).encode("utf-8"))
        if ptr == ffi.NULL:
            _native.raise_last_error(ffi.string(lib.parakeet_capi_load_error()).decode("utf-8", "replace"))
        self._ptr = ptr
        try:
            #: What the context holds (``parakeet_capi_model_kind``: ``_native.MODEL_KIND_ASR``).
            self.model_kind: int = int(lib.parakeet_capi_model_kind(ptr))
            #: The model's description (``parakeet_capi_model_info_json``): arch, sample_rate,
            #: n_mels, d_model, n_layers, vocab_size, frame_sec, has_ctc, has_transducer, isa, ...
            self.info: Dict[str, Any] = json.loads(_native.string_result(lib.parakeet_capi_model_info_json(ptr)))
            #: The rate audio is resampled to before it reaches the library (Hz).
            self.sample_rate: int = int(self.info["sample_rate"])
            if concurrency > 1:
                self.set_concurrency(concurrency, threads)
            elif threads is not None:
                _native.set_threads(threads)
            if request_batching is not None:
                if not isinstance(request_batching, tuple) or len(request_batching) != 2:
                    raise InvalidArgument(
                        f"request_batching must be (max_batch, max_wait_ms), not {request_batching!r}")
                self.set_request_batching(*request_batching)
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"concurrency={self._concurrency}"
        return f"Context({self.model_path!r}, {state})"

    # ---- concurrency -----------------------------------------------------------------------
    @property
    def concurrency(self) -> int:
        """How many requests this context runs at once (backends now serving it)."""
        return self._concurrency

    @property
    def working_set_bytes(self) -> int:
        """Bytes held by the arenas of this context's pool (0 without one): the per-request
        working memory the pool costs on top of the shared weights."""
        with self._using() as ptr:
            return _native.check_count(_native.load()[1].parakeet_capi_pool_working_set_bytes(ptr))

    def set_concurrency(self, backends: int, threads_each: Optional[int] = None) -> int:
        """Serve this context with ``backends`` backends of ``threads_each`` threads each.

        ``threads_each=None`` divides the default thread budget among the backends. With
        ``backends`` 1 the pool is removed and requests go back to the process-wide backend;
        ``threads_each``, if given, then sets that backend's thread count (process-wide).
        Safe while requests run (they finish where they started). Returns the number of
        backends now serving (the library caps it at 64).
        """
        backends = _positive_int(backends, "backends")
        if threads_each is not None:
            threads_each = _positive_int(threads_each, "threads_each")
        with self._using() as ptr:
            _, lib = _native.load()
            n = _native.check_count(lib.parakeet_capi_set_concurrency(
                ptr, backends, 0 if backends == 1 else threads_each or 0))
        if backends == 1 and threads_each is not None:
            _native.set_threads(threads_each)
        self._concurrency = int(n)
        return self._concurrency

    # ---- request batching ------------------------------------------------------------------
    def set_request_batching(self, max_batch: int, max_wait_ms: int = 10) -> None:
        """Batch this context's concurrent :meth:`transcribe` calls (parakeet_capi_set_request_batching):
        calls that run at the same time, from several threads, gather into batches of up to
        ``max_batch`` requests that share one encoder pass and one greedy decode; with a backend
        free a request waits at most ``max_wait_ms`` for others (a lone one runs at once), and
        those that come while the backends are busy gather for the next batch. Transcripts are
        bitwise those of the requests alone. Beam search, hotwords and audio over 30 s run alone.
        ``max_batch`` 0 or 1 turns batching off. A negative value raises :class:`ParakeetError`."""
        for value, what in ((max_batch, "max_batch"), (max_wait_ms, "max_wait_ms")):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise InvalidArgument(f"{what} must be an integer, not {value!r}")
        with self._using() as ptr:
            _native.check_count(_native.load()[1].parakeet_capi_set_request_batching(ptr, int(max_batch),
                                                                                     int(max_wait_ms)))

    def request_batching_stats(self) -> Dict[str, Any]:
        """What request batching did since it was last set (parakeet_capi_request_batching_stats_json):
        ``max_batch`` and ``max_wait_ms`` (0 when off), ``batches``, ``batch_sizes`` (batches of
        1 request, of 2, ...), ``waited_ms_max`` / ``waited_ms_mean`` (how long requests waited
        for their batch) and ``unbatched`` (requests that ran alone)."""
        with self._using() as ptr:
            return json.loads(_native.string_result(_native.load()[1].parakeet_capi_request_batching_stats_json(ptr)))

    # ---- attention -------------------------------------------------------------------------
    @property
    def attention(self) -> Attention:
        """The attention requests that start from now on use: "auto", "full" or ``(left, right)``.

        Setting it (same values as the constructor's ``attention``) applies to requests that
        start afterwards; running ones keep theirs. A bad value raises
        :class:`~parakeet_py.errors.InvalidArgument`.
        """
        with self._using() as ptr:
            info = json.loads(_native.string_result(_native.load()[1].parakeet_capi_model_info_json(ptr)))
            return attention_from_json(info["attention"])

    @attention.setter
    def attention(self, attention: Attention) -> None:
        left, right = attention_pair(attention)
        with self._using() as ptr:
            _native.check_status(_native.load()[1].parakeet_capi_set_attention_context(ptr, left, right))

    # ---- transcription ---------------------------------------------------------------------
    def transcribe(self, audio: AudioSource, *, sample_rate: Optional[int] = None,
                   decoder: Optional[str] = None, timestamps: bool = True,
                   progress: Optional[ProgressCallback] = None, beam: Optional[int] = None,
                   hotwords: Optional[Hotwords] = None, acoustic_top_m: int = 8,
                   vad: Optional[Any] = None, vad_options: Optional[Dict[str, Any]] = None,
                   language: Optional[str] = None, diarizer: Optional[Any] = None,
                   speakers: Optional[Any] = None, speaker_encoder: Optional[Any] = None) -> Transcript:
        """Transcribe one recording.

        ``audio``: a path (any format libsndfile reads: WAV, FLAC, OGG, MP3, ...), the file's
        bytes, a binary file object, or a numpy array (1-D mono or 2-D ``[frames, channels]``,
        mixed down; any float or int dtype, ints scaled to [-1, 1]) with its ``sample_rate``.
        Audio at another rate than the model's is resampled (soxr) first.
        ``decoder``: ``None``/"default" (the model's own head: the transducer for hybrids),
        "ctc", or "tdt"/"rnnt"/"transducer". ``timestamps=False`` returns the text only
        (``tokens`` and ``words`` empty, ``attention`` None unless ``progress`` is given),
        which skips building the JSON document.
        ``beam``: ``None`` decodes greedily; an int N >= 1 runs NeMo's transducer beam search
        with N beams (TDT and RNN-T heads; ``beam=1`` is that search with one beam, not greedy)
        and returns the best hypothesis (see :meth:`transcribe_nbest`).
        ``hotwords``: a :class:`~parakeet_py.hotwords.Hotwords` from :meth:`hotwords`: greedy
        decoding biased towards its phrases (the TDT head, else CTC; no ``decoder``, ``beam``
        or ``progress`` then); ``acoustic_top_m`` acoustic candidates per step (<= 0: 8).
        ``progress``: called on this thread with the fraction done (0..1, never decreasing,
        1.0 at the end); returning ``False`` cancels the request, which then raises
        :class:`Cancelled`. An exception raised by the callback cancels the request too and is
        re-raised here. The GIL is held only while the callback runs.

        ``vad``: a :class:`~parakeet_py.vad.Vad` or the path of a Silero VAD GGUF file: the
        recording's speech segments are transcribed in chunks of at most 30 s of speech
        (``vad_options``: the VAD's options, e.g. ``{"max_segment": 20, "min_pause": 0.3}``),
        silence is skipped, and word and token times stay on the recording's timeline
        (docs/vad.md); ``progress`` gets the VAD's reports and then each chunk's, and cancels
        the whole cut. Not with ``beam`` or ``hotwords``.

        ``language``: a prompt-conditioned model's locale (``info["languages"]["locales"]``, e.g. "de-DE";
        ``None``: the model's default), whose prompt the heads see, as NeMo's ``target_lang``;
        an unknown locale raises :class:`InvalidArgument` naming the known ones. Other models
        ignore it.
        ``diarizer``: a :class:`~parakeet_py.speakers.diarize.Diarizer`: "who said what". Each word gets
        its ``speaker`` (the segment that overlaps it most, else the nearest within 0.5 s, else
        -1; docs/api.md), and the transcript its ``segments`` and ``utterances``. The default
        decoder only (no ``decoder``, ``beam``, ``hotwords`` or ``vad``, and ``timestamps``
        stays on). ``progress`` then covers both stages: the transcription's fraction f is
        reported as f / 2, the diarization's as 0.5 + f / 2, and ``False`` cancels either.
        ``speakers`` with ``speaker_encoder``: a :class:`~parakeet_py.VoiceRegistry` and the
        :class:`~parakeet_py.SpeakerEncoder` its voices were enrolled with, beside ``diarizer``:
        every word and utterance also gets its speaker's ``name`` ("" when the registry accepts
        none) and ``name_score`` (the slot's clean voice matched as
        :meth:`~parakeet_py.Diarizer.diarize_named` does, at its default threshold and margin; no
        ``progress`` then).

        There is no length limit: long audio runs with local attention under "auto" (see
        :attr:`attention`). Raises (``parakeet_py.errors``) :class:`InvalidAudio` for unreadable
        audio or NaN/Inf samples, :class:`Unsupported` for a decoder (or beam search) the model
        does not have, :class:`InvalidArgument` for a bad argument or a closed context.
        """
        if self._ptr is None:  # checked again under the lock below; this one saves decoding audio
            raise InvalidArgument("the context is closed")
        code = decoder_code(decoder)
        if language is not None:
            language = check_language(language)
        if (speakers is None) != (speaker_encoder is None) or (speakers is not None and diarizer is None):
            raise InvalidArgument("speakers= and speaker_encoder= go together, with diarizer=")
        if diarizer is not None:
            if (code != _native.DECODER_DEFAULT or not timestamps or beam is not None or hotwords is not None
                    or vad is not None):
                raise InvalidArgument("diarizer= runs the default decoder with timestamps, without beam, "
                                      "hotwords or vad")
            if language is not None and "languages" in self.info:
                # parakeet_capi_transcribe_and_diarize has no language argument (parakeet.cpp's shape)
                raise InvalidArgument("diarizer= transcribes in the model's default language; language= "
                                      "is not taken with it")
            if speakers is not None:
                return self._transcribe_named(audio, sample_rate, diarizer, speakers, speaker_encoder, progress)
            return self._transcribe_diarized(audio, sample_rate, diarizer, progress)
        if vad is not None:
            if beam is not None or hotwords is not None:
                raise InvalidArgument("vad= takes no beam or hotwords")
            return self._transcribe_vad(audio, sample_rate, code, vad, vad_options or {}, progress, language)
        if beam is not None:
            if code == _native.DECODER_CTC:
                raise InvalidArgument("beam search runs on the transducer head, not CTC")
            best = self.transcribe_nbest(audio, sample_rate=sample_rate, beam=beam, nbest=1,
                                         progress=progress, language=language)[0].transcript
            return best if timestamps else Transcript(text=best.text, duration=best.duration,
                                                      frame_sec=best.frame_sec)
        if hotwords is not None and (code != _native.DECODER_DEFAULT or progress is not None):
            raise InvalidArgument("hotwords choose their head (TDT, else CTC) and take no decoder or progress")
        samples = request_samples(audio, sample_rate, self.sample_rate)
        ffi, lib = _native.load()
        if hotwords is not None:
            with self._using() as ptr:
                buf = ffi.from_buffer("float[]", samples)
                t = _hotwords.transcribe_with_hotwords(ptr, buf, int(samples.size), self.sample_rate, hotwords,
                                                       acoustic_top_m, language)
            return t if timestamps else Transcript(text=t.text, duration=t.duration, frame_sec=t.frame_sec)
        check_progress(progress)
        with self._using() as ptr:
            buf = ffi.from_buffer("float[]", samples)
            if progress is not None:
                return _transcribe_with_progress(ptr, buf, int(samples.size), self.sample_rate, code,
                                                 progress, timestamps, language)
            if language is not None:
                document = _transcribe_lang(ptr, buf, int(samples.size), self.sample_rate, code, language,
                                            timestamps)
            else:
                fn = lib.parakeet_capi_transcribe_pcm_json if timestamps else lib.parakeet_capi_transcribe_pcm
                document = _native.string_result(fn(ptr, buf, int(samples.size), self.sample_rate, code))
        if timestamps:
            return Transcript.from_json(document)
        return Transcript.text_only(document, int(samples.size), self.sample_rate, float(self.info["frame_sec"]))

    def _transcribe_diarized(self, audio: AudioSource, sample_rate: Optional[int], diarizer: Any,
                             progress: Optional[ProgressCallback]) -> Transcript:
        """parakeet_capi_transcribe_and_diarize_json[_with_progress]."""
        samples = self._diarizable(audio, sample_rate, diarizer)
        check_progress(progress)
        ffi, lib = _native.load()
        with self._using() as ptr, diarizer._using() as diar:
            buf, n = ffi.from_buffer("float[]", samples), int(samples.size)
            if progress is None:
                doc = _native.string_result(lib.parakeet_capi_transcribe_and_diarize_json(
                    ptr, diar, buf, n, self.sample_rate))
            else:
                doc = call_with_progress(progress, lambda fn, handle: (
                    lib.parakeet_capi_transcribe_and_diarize_json_with_progress(
                        ptr, diar, buf, n, self.sample_rate, fn, handle)))
            return Transcript.from_sas_json(doc)

    def _transcribe_named(self, audio: AudioSource, sample_rate: Optional[int], diarizer: Any, registry: Any,
                          encoder: Any, progress: Optional[ProgressCallback]) -> Transcript:
        """parakeet_capi_transcribe_and_diarize_named_json (which reports no progress)."""
        if progress is not None:
            raise InvalidArgument("speakers= reports no progress")
        if not isinstance(registry, VoiceRegistry) or not isinstance(encoder, SpeakerEncoder):
            raise InvalidArgument(f"speakers must be a VoiceRegistry and speaker_encoder a SpeakerEncoder, not a "
                                  f"{type(registry).__name__} and a {type(encoder).__name__}")
        samples = self._diarizable(audio, sample_rate, diarizer)
        ffi, lib = _native.load()
        with self._using() as ptr, diarizer._using() as diar, encoder._using() as speaker:
            return Transcript.from_sas_json(_native.string_result(lib.parakeet_capi_transcribe_and_diarize_named_json(
                ptr, diar, speaker, registry.handle(), ffi.from_buffer("float[]", samples), int(samples.size),
                self.sample_rate)))

    def _diarizable(self, audio: AudioSource, sample_rate: Optional[int], diarizer: Any) -> np.ndarray:
        """The audio for one speaker-attributed call, at the model's rate, with ``diarizer`` checked."""
        if not isinstance(diarizer, Diarizer):
            raise InvalidArgument(f"diarizer must be a Diarizer, not a {type(diarizer).__name__}")
        return request_samples(audio, sample_rate, self.sample_rate)

    def _transcribe_vad(self, audio: AudioSource, sample_rate: Optional[int], code: int, vad: Any,
                        vad_options: Dict[str, Any], progress: Optional[ProgressCallback],
                        language: Optional[str]) -> Transcript:
        """The library's VAD-cut transcription (parakeet_capi_transcribe_pcm_json_vad_with[_progress])."""
        from .vad import as_vad

        check_progress(progress)
        samples = request_samples(audio, sample_rate, self.sample_rate, check_finite=True)
        detector = as_vad(vad)
        ffi, lib = _native.load()
        if language is not None:
            vad_options = {**vad_options, "language": language}
        options = json.dumps(vad_options).encode("utf-8")
        try:
            with self._using() as ptr, detector._using() as vad_ptr:
                buf, n = ffi.from_buffer("float[]", samples), int(samples.size)
                if progress is None:
                    doc = _native.string_result(lib.parakeet_capi_transcribe_pcm_json_vad_with(
                        ptr, vad_ptr, buf, n, self.sample_rate, code, options))
                else:
                    doc = call_with_progress(progress, lambda fn, handle: (
                        lib.parakeet_capi_transcribe_pcm_json_vad_with_progress(
                            ptr, vad_ptr, buf, n, self.sample_rate, code, options, fn, handle)))
                return Transcript.from_json(doc)
        finally:
            if detector is not vad:
                detector.close()

    def hotwords(self, phrases: Sequence[str], *, score: float = 1.0,
                 weights: Optional[Sequence[float]] = None) -> Hotwords:
        """Compile phrases into a :class:`~parakeet_py.hotwords.Hotwords` graph for
        :meth:`transcribe` (tokenised as the model's SentencePiece tokenizer would). ``score``:
        the bias per matched token (about 1.5 for TDT, 8 for CTC); ``weights``: one factor > 0
        per phrase. Raises :class:`ParakeetError` for a phrase the tokenizer cannot represent.
        """
        with self._using() as ptr:
            return _hotwords.compile_hotwords(ptr, phrases, score, weights)

    def transcribe_nbest(self, audio: AudioSource, *, sample_rate: Optional[int] = None, beam: int = 4,
                         nbest: Optional[int] = None, score_norm: bool = True,
                         progress: Optional[ProgressCallback] = None,
                         language: Optional[str] = None) -> List[Hypothesis]:
        """NeMo's transducer beam search (strategy ``beam``) with ``beam`` beams: the ``nbest``
        best hypotheses (default: ``beam``; NeMo may end with fewer), best first, each a
        :class:`~parakeet_py.nbest.Hypothesis` with its transcript and scores. ``score_norm``
        ranks by score / (tokens + 1) (NeMo's default), otherwise by score. TDT and RNN-T heads
        (hybrids use their transducer); a CTC-only model raises
        :class:`~parakeet_py.errors.Unsupported`. ``progress`` is called as for
        :meth:`transcribe`, from the encoder and then at every frame of the search, and cancels
        it the same way. ``language`` as for :meth:`transcribe` (not with ``progress``).
        """
        if self._ptr is None:
            raise InvalidArgument("the context is closed")
        nbest = beam if nbest is None else nbest
        _nbest.check_beam(beam, nbest)
        samples = request_samples(audio, sample_rate, self.sample_rate)
        check_progress(progress)
        ffi, lib = _native.load()
        with self._using() as ptr:
            buf = ffi.from_buffer("float[]", samples)
            if progress is None:
                return _nbest.transcribe_nbest(ptr, buf, int(samples.size), self.sample_rate, beam, nbest, score_norm,
                                               None if language is None else check_language(language))
            if language is not None:
                raise InvalidArgument("language takes no progress callback")
            norm, n = 1 if score_norm else 0, int(samples.size)
            document = call_with_progress(progress, lambda fn, handle: (
                lib.parakeet_capi_transcribe_pcm_nbest_json_progress(ptr, buf, n, self.sample_rate, beam, nbest, norm,
                                                                     fn, handle)))
            return _nbest.hypotheses_from_json(document)

    # ---- streaming -------------------------------------------------------------------------
    @overload
    def stream(self, chunk: Optional[float] = None, left: Optional[float] = None, right: Optional[float] = None, *,
               att_context: Optional[Sequence[int]] = None, decoder: Optional[str] = None,
               sample_rate: Optional[int] = None, language: Optional[str] = None, diarizer: None = None,
               latency: None = None) -> Stream: ...

    @overload
    def stream(self, *, sample_rate: Optional[int] = None, diarizer: Diarizer,
               latency: Union[str, int, None] = None) -> SpeakerStream: ...

    def stream(self, chunk: Optional[float] = None, left: Optional[float] = None, right: Optional[float] = None, *,
               att_context: Optional[Sequence[int]] = None, decoder: Optional[str] = None,
               sample_rate: Optional[int] = None, language: Optional[str] = None, diarizer: Optional[Any] = None,
               latency: Union[str, int, None] = None) -> Union[Stream, SpeakerStream]:
        """Begin a live transcription (see :mod:`.stream`), or with ``diarizer`` a live
        speaker-attributed one (see :mod:`.speaker_stream`).

        An offline model streams by NeMo's buffered chunked inference: ``chunk``, ``left``,
        ``right`` are the seconds of audio decoded per step and of context before and after it
        (default NeMo's 10-2-2: text final about 4 s after it is spoken; 10-10-5 gives results
        close to offline). Seconds are truncated to whole encoder frames (0.08 s); ``chunk`` >=
        0.08, ``left`` and ``right`` >= 0, each at most 600.

        A cache-aware streaming model (``info["streaming"]["mode"] == "cache_aware"``) streams as
        NeMo's cache-aware pipeline does, with ``att_context`` = [left, right] one of the model's
        contexts (``info["streaming"]["contexts"]``; default the first): chunks of (right + 1) x
        80 ms, each decoded as soon as its audio arrived. The windows apply to offline models
        only, and ``att_context`` to cache-aware ones; the other kind's option is an error.

        ``decoder`` and ``language`` as for :meth:`transcribe`. ``sample_rate``: the rate of the audio
        :meth:`Stream.feed` gets (default: the model's; others are resampled with soxr,
        chunking-independently). Returns a :class:`Stream` (a context manager). Raises
        :class:`ParakeetError` for bad settings (the library's message), a decoder the model
        lacks, or a closed context.

        ``diarizer``: a :class:`~parakeet_py.speakers.diarize.Diarizer` of a streaming Sortformer ("who
        said what" live): returns a :class:`SpeakerStream` whose ``feed`` gives the
        :class:`Utterance` of each word as it commits. ``latency``: the diarizer's preset, as
        :meth:`Diarizer.stream` takes it ("model", the default, "low", "very_low", "ultra_low" or
        0..3). The transcription windows are the library's, so ``chunk``, ``left``, ``right``,
        ``att_context``, ``decoder`` and ``language`` do not go with it (InvalidArgument), nor
        ``latency`` without it; ``sample_rate`` as above (other than 16 kHz, resampled with
        soxr). A diarizer that cannot stream (one that normalises per_feature) raises
        :class:`Unsupported`.
        """
        if diarizer is not None or latency is not None:
            return self._speaker_stream(diarizer, latency, sample_rate, chunk=chunk, left=left, right=right,
                                        att_context=att_context, decoder=decoder, language=language)
        code = decoder_code(decoder)
        cache_aware = self.info.get("streaming", {}).get("mode") == "cache_aware"
        settings: Dict[str, Any] = {}
        if att_context is not None:
            settings["att_context"] = list(att_context) if isinstance(att_context, (list, tuple)) else att_context
        elif cache_aware and chunk is None and left is None and right is None:
            settings["att_context"] = [self.info["streaming"]["contexts"][0]["left"],
                                       self.info["streaming"]["contexts"][0]["right"]]
        for name, value, default in (("chunk", chunk, 2.0), ("left", left, 10.0), ("right", right, 2.0)):
            if value is not None or (not cache_aware and att_context is None):
                settings[name] = default if value is None else value
        options = stream_options(dict(settings, language=language), code)
        rate = self.sample_rate if sample_rate is None else _positive_int(sample_rate, "sample_rate")
        with self._using() as ptr:
            stream = begin_stream(self, ptr, options, rate, settings)
            self._lend(stream)
        return stream

    def stream_group(self, max_batch: int = 16, max_wait_ms: int = 20) -> StreamGroup:
        """A group that batches the feeds of this context's live streams (see
        :mod:`.stream_group`): streams that :meth:`StreamGroup.join` it share their encoder
        passes (the steps of a cache-aware model's streams, the windows of an offline model's
        buffered streams), at most ``max_batch`` per batch, a ready chunk waiting at most
        ``max_wait_ms`` for others. Results are bitwise those of the streams alone. Raises
        :class:`ParakeetError` for max_batch < 1 or max_wait_ms < 0. A context manager; closing
        the context closes it."""
        with self._using() as ptr:
            group = new_stream_group(self, ptr, max_batch, max_wait_ms)
            self._lend(group)
        return group

    def _speaker_stream(self, diarizer: Any, latency: Union[str, int, None], sample_rate: Optional[int],
                        **asr_only: Any) -> SpeakerStream:
        if diarizer is None:
            raise InvalidArgument("latency= is the diarizer's preset: it goes with diarizer=")
        given = [name for name, value in asr_only.items() if value is not None]
        if given:
            raise InvalidArgument(f"diarizer= streams with the library's own transcription windows and the model's "
                                  f"default decoder and language; {', '.join(given)} do not go with it")
        rate = DIARIZER_RATE if sample_rate is None else _positive_int(sample_rate, "sample_rate")
        with self._using() as ptr:
            stream = begin_speaker_stream(self, ptr, diarizer, "model" if latency is None else latency, rate)
            self._lend(stream)
        return stream

    def scene_stream(self, *, diarizer: Optional[Diarizer] = None, tagger: Optional[Any] = None,
                     speaker_encoder: Optional[Any] = None, registry: Optional[Any] = None,
                     latency: Union[str, int, None] = None, **options: Any) -> SceneStream:
        """Begin a live scene (see :mod:`.speakers.scene_stream`): this context's words, with
        ``diarizer`` their speakers, with ``speaker_encoder`` and ``registry`` (and the diarizer)
        the speakers' names, with ``tagger`` (a SoundTagger) the sounds heard. Each feed of 16 kHz
        audio returns the library's document (docs/api.md, "The scene stream"). ``latency``: the
        diarizer's preset; ``options``: the naming's accept_threshold, margin, min_voice_sec,
        refresh_sec, max_voice_sec and the sound stream's options. Raises the library's errors
        for bad options or models."""
        return begin_scene_stream(self, diarizer=diarizer, tagger=tagger, speaker_encoder=speaker_encoder,
                                  registry=registry, latency=latency, **options)

    def transcribe_many(self, items: Iterable[Any], *, workers: Optional[int] = None,
                        sample_rate: Optional[int] = None, decoder: Optional[str] = None,
                        timestamps: bool = True, return_exceptions: bool = False) -> List[Any]:
        """Transcribe several recordings in the library's batched passes; results come back in
        input order, each bitwise what :meth:`transcribe` gives the item alone.

        Each item is anything :meth:`transcribe` accepts, or an ``(array, sample_rate)`` tuple;
        a bare array uses ``sample_rate``. ``workers`` threads read and resample the items
        (default: :attr:`concurrency`); windows of 16 per backend go to the library's batch call
        (:mod:`.batch_call`), the next window read while one is transcribed, so ``items`` may be
        a generator of any length.

        Every item is attempted. With ``return_exceptions=False`` (default) the first failure
        in input order is raised once all items have finished (its ``index`` attribute is the
        item's position); with ``return_exceptions=True`` a failed item's slot holds its
        :class:`ParakeetError` instead of a :class:`Transcript`. An unknown ``decoder`` or a bad
        ``workers`` raises :class:`InvalidArgument` before any item is read.
        """
        workers = self._concurrency if workers is None else _positive_int(workers, "workers")
        decoder_code(decoder)
        sources = ((item, sample_rate) if isinstance(item, np.ndarray)
                   else (item[0], item[1]) if isinstance(item, tuple) and len(item) == 2
                   and isinstance(item[0], np.ndarray) else (item, None) for item in items)
        results: List[Any] = []
        failure: Optional[BaseException] = None
        for index, result in enumerate(transcribe_sources(self, sources, workers=workers, decoder=decoder,
                                                          timestamps=timestamps)):
            if isinstance(result, ParakeetError) and return_exceptions:
                results.append(result)
            elif isinstance(result, Exception):
                if failure is None:
                    setattr(result, "index", index)
                    failure = result
                results.append(None)
            else:
                results.append(result)
        if failure is not None:
            raise failure
        return results


def _transcribe_with_progress(ptr: Any, buf: Any, n: int, rate: int, code: int, progress: ProgressCallback,
                              timestamps: bool, language: Optional[str] = None) -> Transcript:
    """One ``parakeet_capi_transcribe_pcm_json[_lang]_progress`` call with ``progress`` as its callback."""
    _, lib = _native.load()
    if language is None:
        def call(fn: Any, handle: Any) -> Any:
            return lib.parakeet_capi_transcribe_pcm_json_progress(ptr, buf, n, rate, code, fn, handle)
    else:
        lang = _native.c_string(language)

        def call(fn: Any, handle: Any) -> Any:
            return lib.parakeet_capi_transcribe_pcm_json_lang_progress(ptr, buf, n, rate, code, lang, fn, handle)
    transcript = Transcript.from_json(call_with_progress(progress, call))
    if timestamps:
        return transcript
    return Transcript(text=transcript.text, duration=transcript.duration, frame_sec=transcript.frame_sec,
                      attention=transcript.attention)


def _transcribe_lang(ptr: Any, buf: Any, n: int, rate: int, code: int, language: str, timestamps: bool) -> str:
    """One clip with a language: its JSON document (through the one-clip batch call, the JSON
    call that takes a language) or, without timestamps, its text."""
    ffi, lib = _native.load()
    lang = _native.c_string(language)
    if not timestamps:
        return _native.string_result(lib.parakeet_capi_transcribe_pcm_lang(ptr, buf, n, rate, code, lang))
    batch = _native.string_result(lib.parakeet_capi_transcribe_pcm_batch_json_lang(
        ptr, buf, ffi.new("int[1]", [n]), 1, rate, code, lang))
    return batch[1:-1]  # "[<the clip's document>]"
