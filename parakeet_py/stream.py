"""Live transcription: :meth:`Context.stream` gives a :class:`Stream`, fed audio as it arrives.

A stream wraps a ``parakeet_stream`` (the C ABI's "Streaming" section): NeMo's buffered chunked
inference on an offline model. The audio is cut into ``chunk`` seconds; each chunk is encoded
with up to ``left`` seconds before it and ``right`` after it, so its text is final ``chunk +
right`` seconds after the chunk starts. Text, once final, never changes; ``partial`` is what the
model hears after it and may still change.

The result depends only on the audio and the settings: not on how the audio is cut into
feeds (soxr's stream resampler, used for other rates, is chunking-independent too), on
threads or on the context's pool. A stream holds no backend between calls, so many streams
share a context's K backends; each stream is used by one thread at a time (its calls are
serialised), different streams may be fed from different threads at once, and the GIL is
released during every C call.
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np
import soxr

from . import _native
from .audio.prepare import _check_finite, pcm_samples
from .errors import InternalError, InvalidArgument
from .transcript import Token, Word, tokens_from_json, words_from_json

# Feeds are handed to the library this many samples at a time at most (n_samples is a C int;
# results do not depend on the cut).
MAX_FEED_SAMPLES = 1 << 24


@dataclass(frozen=True)
class StreamEvent:
    """An end-of-utterance (``"eou"``) or backchannel (``"eob"``) token decoded by the stream
    (models whose vocabulary has <EOU>/<EOB>; offline Parakeet models have neither)."""

    type: str
    frame: int
    time: float


@dataclass(frozen=True)
class StreamUpdate:
    """What one :meth:`Stream.feed` or :meth:`Stream.finalize` call made final.

    ``text``: the text that became final in this call ("" when none; the texts of all updates
    concatenated are the whole transcript). ``words`` / ``tokens``: the words and tokens that
    became final, with times in seconds from the start of the stream. ``partial``: the text
    decoded after the final text (the open word and the right context); it may still change.
    ``audio_sec``: audio fed so far; ``final_sec``: audio whose text is final; ``chunks``:
    chunks decoded so far; ``finalized``: true after :meth:`Stream.finalize`.
    """

    text: str = ""
    words: List[Word] = field(default_factory=list)
    tokens: List[Token] = field(default_factory=list)
    partial: str = ""
    audio_sec: float = 0.0
    final_sec: float = 0.0
    chunks: int = 0
    finalized: bool = False
    events: List[StreamEvent] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready dict with the same fields (words and tokens as their ``to_dict``)."""
        return {
            "text": self.text, "partial": self.partial, "audio_sec": self.audio_sec, "final_sec": self.final_sec,
            "chunks": self.chunks, "finalized": self.finalized,
            "words": [w.to_dict() for w in self.words], "tokens": [t.to_dict() for t in self.tokens],
            "events": [{"type": e.type, "frame": e.frame, "time": e.time} for e in self.events],
        }

    @classmethod
    def from_json(cls, document: str) -> "StreamUpdate":
        """Parse the library's stream JSON (``parakeet_capi_stream_feed_json``)."""
        try:
            d = json.loads(document)
            frame_sec = float(d["frame_sec"])
            return cls(text=str(d["text"]), words=words_from_json(d["words"]),
                       tokens=tokens_from_json(d["tokens"], frame_sec), partial=str(d["partial"]),
                       audio_sec=float(d["audio_sec"]), final_sec=float(d["final_sec"]), chunks=int(d["chunks"]),
                       finalized=bool(d["finalized"]),
                       events=[StreamEvent(type=str(e["type"]), frame=int(e["frame"]), time=float(e["t"]))
                               for e in d.get("events", [])])
        except (ValueError, KeyError, TypeError) as e:
            raise InternalError(f"the library returned a stream update this binding cannot read: {e}") from e

    def then(self, later: "StreamUpdate") -> "StreamUpdate":
        """This update followed by ``later`` as one (finals joined, the later state kept)."""
        return StreamUpdate(text=self.text + later.text, words=self.words + later.words,
                            tokens=self.tokens + later.tokens, partial=later.partial, audio_sec=later.audio_sec,
                            final_sec=later.final_sec, chunks=later.chunks, finalized=later.finalized,
                            events=self.events + later.events)


def check_language(language: Any) -> str:
    """A ``language`` argument: a prompt model's locale (e.g. "de-DE"; the library says which it
    knows), which other models ignore."""
    if not isinstance(language, str):
        raise InvalidArgument(f"language must be a string such as 'en-US', not {language!r}")
    return language


def stream_options(settings: Dict[str, Any], decoder: int) -> str:
    """The ``parakeet_capi_stream_begin_with`` options document (the library checks ranges and
    which kind of model takes which keys). ``settings``: {"chunk", "left", "right"} seconds
    (buffered streaming of an offline model) or {"att_context": [L, R]} (a cache-aware model),
    and "language" (a prompt model's locale)."""
    doc: Dict[str, Any] = {}
    for name in ("chunk", "left", "right"):
        if name not in settings:
            continue
        value = settings[name]
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not np.isfinite(value):
            raise InvalidArgument(f"{name} must be a number of seconds, not {value!r}")
        doc[f"{name}_sec"] = float(value)
    if "att_context" in settings:
        ctx = settings["att_context"]
        if not isinstance(ctx, (list, tuple)) or len(ctx) != 2 or \
                not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in ctx):
            raise InvalidArgument(f"att_context must be a [left, right] pair of frame counts, not {ctx!r}")
        doc["att_context"] = [int(ctx[0]), int(ctx[1])]
    if settings.get("language") is not None:
        doc["language"] = check_language(settings["language"])
    doc["decoder"] = int(decoder)
    return json.dumps(doc)


class Stream:
    """A live transcription on a :class:`Context` (made by :meth:`Context.stream`).

    ``feed(pcm)`` any number of times as audio arrives, then ``finalize()`` once for the rest;
    each returns a :class:`StreamUpdate`. ``text`` is all the final text so far. Closing (or
    leaving the ``with`` block) frees the library's stream; a closed stream refuses calls, and
    closing the context closes its streams. Errors are :class:`ParakeetError` with the
    library's exact message for this thread's call.
    """

    def __init__(self, context: Any, ptr: Any, sample_rate: int, settings: Dict[str, float]) -> None:
        self._context = context
        self._ptr = ptr
        self._lock = threading.Lock()  # one C call (or the free) at a time; guards the resampler
        #: The rate this stream's audio is fed at (Hz); other than the model's, it is resampled.
        self.sample_rate = sample_rate
        #: The latency settings: {"chunk", "left", "right"} in seconds (buffered streaming of an
        #: offline model), or {"att_context": [left, right]} (a cache-aware model's context).
        self.settings = dict(settings)
        target = int(context.sample_rate)
        self._resampler = (None if sample_rate == target
                           else soxr.ResampleStream(sample_rate, target, 1, dtype="float32", quality="HQ"))
        self._fed = 0  # input samples so far, to name a bad sample by its position
        self._text: List[str] = []
        self._chunks = 0
        self._finalized = False

    # ---- lifetime --------------------------------------------------------------------------
    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Free the library's stream (waits for a call running on it). Idempotent."""
        with self._lock:
            ptr, self._ptr = self._ptr, None
            if ptr is not None:
                _native.load()[1].parakeet_capi_stream_free(ptr)

    @property
    def closed(self) -> bool:
        return self._ptr is None

    @property
    def finalized(self) -> bool:
        """True once :meth:`finalize` succeeded (the stream then takes no more audio)."""
        return self._finalized

    @property
    def chunks(self) -> int:
        """Chunks decoded so far."""
        return self._chunks

    @property
    def text(self) -> str:
        """All the text that is final so far."""
        return "".join(self._text)

    def __del__(self) -> None:
        _native.free_in_finalizer(getattr(self, "_ptr", None), "parakeet_capi_stream_free")

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("finalized" if self._finalized else "open")
        settings = ", ".join(f"{k}={v}" for k, v in self.settings.items())
        return f"Stream({settings}, {state})"

    # ---- audio -----------------------------------------------------------------------------
    def feed(self, pcm: np.ndarray) -> StreamUpdate:
        """Append audio at :attr:`sample_rate` and decode every chunk now complete.

        ``pcm``: a numpy array, 1-D mono or 2-D ``[frames, channels]`` (averaged), any real
        dtype (ints scaled to [-1, 1]); any length, 0 included. Raises :class:`ParakeetError`
        for NaN/Inf samples, a finalized or closed stream, or a closed context.
        """
        samples = pcm_samples(pcm)
        with self._calling() as (ffi, lib, ptr):
            if self._resampler is not None:
                if self._finalized:
                    raise InvalidArgument("the stream is finalized; it takes no more audio")
                _check_finite(samples, "audio array", self._fed)  # the resampler would smear a bad one
                samples = self._resampler.resample_chunk(samples, last=False)
            self._fed += int(pcm.shape[0])
            return self._feed(ffi, lib, ptr, samples)

    def finalize(self) -> StreamUpdate:
        """Decode the rest of the audio (the last chunk); the stream then takes no more audio."""
        with self._calling() as (ffi, lib, ptr):
            update = StreamUpdate()
            if self._resampler is not None and not self._finalized:
                update = self._feed(ffi, lib, ptr, self._resampler.resample_chunk(
                    np.empty(0, dtype=np.float32), last=True))
            result = lib.parakeet_capi_stream_finalize_json(ptr)
            last = self._take(ffi, result)
            self._finalized = True
            return update.then(last)

    def _feed(self, ffi: Any, lib: Any, ptr: Any, samples: np.ndarray) -> StreamUpdate:
        update: Optional[StreamUpdate] = None
        for begin in range(0, max(samples.size, 1), MAX_FEED_SAMPLES):
            block = samples[begin:begin + MAX_FEED_SAMPLES]
            result = lib.parakeet_capi_stream_feed_json(ptr, ffi.from_buffer("float[]", block), int(block.size))
            part = self._take(ffi, result)
            update = part if update is None else update.then(part)
        assert update is not None
        return update

    def _take(self, ffi: Any, result: Any) -> StreamUpdate:
        update = StreamUpdate.from_json(_native.string_result(result))
        self._text.append(update.text)
        self._chunks = update.chunks
        return update

    @contextmanager
    def _calling(self) -> Iterator[Tuple[Any, Any, Any]]:
        """``(ffi, lib, stream pointer)`` for one call: the context counted as in use (closing
        it waits) and this stream's lock held; a closed stream or context is refused."""
        with self._context._using(), self._lock:
            if self._ptr is None:
                raise InvalidArgument("the stream is closed")
            ffi, lib = _native.load()
            yield ffi, lib, self._ptr


def begin(context: Any, ctx_ptr: Any, options: str, sample_rate: int, settings: Dict[str, float]) -> Stream:
    """A new :class:`Stream` on ``ctx_ptr`` (``parakeet_capi_stream_begin_with``)."""
    _, lib = _native.load()
    ptr = _native.check_pointer(lib.parakeet_capi_stream_begin_with(ctx_ptr, options.encode("utf-8")))
    return Stream(context, ptr, sample_rate, settings)
