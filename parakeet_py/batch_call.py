"""Many clips through the library's batch call, each with the result or the error of its own call.

``parakeet_capi_transcribe_pcm_batch_json_lang`` (docs/api.md, "Batch calls") sorts a call's
clips longest first and runs them in batches of up to 16 that share one encoder pass and one
greedy decode, as many batches at once as the context has backends; every clip's document is
bitwise what its single call gives. Python's batch paths (:meth:`Context.transcribe_many`, the
local and Ray batch jobs, ``parakeet-cli transcribe`` of several files) hand it windows of
:func:`window_size` clips, read ahead within a bound, so a collection of any size streams
through in bounded memory.

Why the batch call rather than request batching (``Context(request_batching=...)``) fed by
more submitting threads: it was never slower (110M q8_0, avx512, clips of 2-5 s: 38 clips/s
against 22 on 1 backend x 2 threads and 52 against 37 on 2 x 1 under load; in the batch job
on a quieter machine 1.07x and 1.01x; docs/performance.md, "Python batch paths"). A window
sorted longest first keeps every step of the lockstep decode full, while request batching
batches whatever arrives together, waits on a timer for batch-mates, and needs a thread per
clip in flight.

The call is all or nothing: one bad clip fails it ("clip i: ..."). So that every clip keeps
the result and the error of its own call:

* a clip with NaN or Inf samples runs alone from the start (the library finds them only
  inside its batch, after the window's work);
* when the call fails anyway (a head the model lacks, a closed context), every clip of the
  window runs alone (:meth:`Context.transcribe`) for its own result or error.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np

from . import _native
from .audio.prepare import AudioSource, request_samples
from .decoders import decoder_code
from .errors import ParakeetError
from .read_ahead import ReadAhead
from .stream import check_language
from .transcript import Transcript

#: Clips per batched pass (the library's, model/offline/request_set.h): a window holds this
#: many per backend, so every backend runs one full batch per call.
BATCH = 16
#: A window closes early once its clips hold this many bytes of samples (64 Mi samples, 70 min
#: at 16 kHz): long recordings gain nothing from batching, and memory stays bounded.
WINDOW_BYTES = 1 << 28

#: One clip's outcome: its transcript, or the exception its own transcription raised.
Result = Union[Transcript, Exception]
T = TypeVar("T")

# ``ctx`` below is a Context (typed Any: context.py imports this module).


def window_size(concurrency: int) -> int:
    """Clips per batch call on a context of ``concurrency`` backends: one full batch for each."""
    return BATCH * max(1, concurrency)


def windows(items: Iterable[T], size: int, nbytes: Callable[[T], int]) -> Iterator[List[T]]:
    """``items`` in consecutive lists of at most ``size``, a list closed early once its items'
    ``nbytes`` reach :data:`WINDOW_BYTES`."""
    window: List[T] = []
    held = 0
    for item in items:
        window.append(item)
        held += nbytes(item)
        if len(window) >= size or held >= WINDOW_BYTES:
            yield window
            window, held = [], 0
    if window:
        yield window


def _batch_documents(ctx: Any, clips: Sequence[np.ndarray], decoder: Optional[str],
                     language: Optional[str]) -> List[Dict[str, Any]]:
    """The batch call's parsed documents for ``clips`` (raises the call's error)."""
    code = decoder_code(decoder)
    lang = _native.c_string(None if language is None else check_language(language))
    ffi, lib = _native.load()
    concat = np.concatenate(clips)
    with ctx._using() as ptr:
        document = _native.string_result(lib.parakeet_capi_transcribe_pcm_batch_json_lang(
            ptr, ffi.from_buffer("float[]", concat), ffi.new("int[]", [int(c.size) for c in clips]), len(clips),
            ctx.sample_rate, code, lang))
    return json.loads(document)


def transcribe_window(ctx: Any, clips: Sequence[np.ndarray], *, decoder: Optional[str] = None,
                      timestamps: bool = True, language: Optional[str] = None) -> List[Result]:
    """``clips`` (float32 mono at ``ctx.sample_rate``, as :func:`request_samples` gives them)
    in one batch call: per clip, in order, the :class:`Transcript` or the exception that
    ``ctx.transcribe(clip, decoder=, timestamps=, language=)`` gives it."""
    results: List[Optional[Result]] = [None] * len(clips)
    finite = [i for i, clip in enumerate(clips) if np.isfinite(clip).all()]
    documents: List[Dict[str, Any]] = []
    if finite:
        try:
            documents = _batch_documents(ctx, [clips[i] for i in finite], decoder, language)
        except ParakeetError:
            pass  # a clip failed the call: every clip runs alone below, for its own result or error
    frame_sec = float(ctx.info["frame_sec"])
    for i, document in zip(finite, documents):
        results[i] = (Transcript.from_document(document) if timestamps else
                      Transcript.text_only(str(document["text"]), int(clips[i].size), ctx.sample_rate, frame_sec))
    for i, result in enumerate(results):
        if result is None:
            try:
                results[i] = ctx.transcribe(clips[i], sample_rate=ctx.sample_rate, decoder=decoder,
                                            timestamps=timestamps, language=language)
            except Exception as e:  # the clip's own error: its caller reports it as that clip's
                results[i] = e
    return results  # type: ignore[return-value]


def transcribe_decoded(ctx: Any, decoded: Iterable[Tuple[T, Optional[np.ndarray], Any]], *,
                       decoder: Optional[str] = None, timestamps: bool = True,
                       language: Optional[str] = None) -> Iterator[Tuple[T, Any]]:
    """Per ``(item, samples, error)`` in order, ``(item, result)``: the samples transcribed in
    windows (:func:`window_size` clips, :data:`WINDOW_BYTES`), each in one batch call, so the
    result is the item's :class:`Transcript` or the exception of its own call; ``error`` where
    ``samples`` is None (the item could not be prepared)."""
    for window in windows(decoded, window_size(ctx.concurrency), lambda d: d[1].nbytes if d[1] is not None else 0):
        transcribed = iter(transcribe_window(ctx, [samples for _, samples, _ in window if samples is not None],
                                             decoder=decoder, timestamps=timestamps, language=language))
        for item, samples, error in window:
            yield item, (next(transcribed) if samples is not None else error)


def transcribe_sources(ctx: Any, sources: Iterable[Tuple[AudioSource, Optional[int]]], *, workers: int,
                       decoder: Optional[str] = None, timestamps: bool = True,
                       language: Optional[str] = None) -> Iterator[Result]:
    """Each ``(audio, sample_rate)`` source (what :meth:`Context.transcribe` takes), prepared as
    it prepares them on ``workers`` threads and transcribed in windows: per source, in order,
    its :class:`Transcript` or the exception its own ``ctx.transcribe`` raises. Lazy: the
    sources prepared ahead, while a window is transcribed, are at most a window's count and
    :data:`WINDOW_BYTES` of samples (:class:`.read_ahead.ReadAhead`), so hour-long files are not
    read a window ahead whole."""
    def prepare(entry: Tuple[int, Tuple[AudioSource, Optional[int]]], rate: int) -> Any:
        audio, sample_rate = entry[1]
        try:
            return entry, request_samples(audio, sample_rate, rate), None
        except Exception as e:  # the source's own error (unreadable, a bad rate): its result
            return entry, None, e

    handed_out = 0
    with ReadAhead(enumerate(sources), ctx.sample_rate, prepare, decoders=workers,
                   max_items=window_size(ctx.concurrency), max_bytes=WINDOW_BYTES) as prepared:
        for (index, _), result in transcribe_decoded(ctx, prepared, decoder=decoder, timestamps=timestamps,
                                                     language=language):
            if index != handed_out:  # only a preparing thread's death skips a source
                raise RuntimeError(f"source {handed_out} was lost: {'; '.join(prepared.deaths)}")
            handed_out += 1
            yield result
        if prepared.deaths:
            raise RuntimeError(f"sources after {handed_out} were lost: {'; '.join(prepared.deaths)}")
