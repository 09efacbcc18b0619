"""``Context``: one loaded model, shared by any number of Python threads.

A context wraps a ``parakeet_ctx``. Audio is decoded, mixed down and resampled in Python
(:mod:`.audio`), then handed to ``parakeet_capi_transcribe_pcm[_json]``; the GIL is released
for the whole C call, so threads transcribing on a context with ``concurrency`` K > 1 really
run K requests at once (each on its own backend of the library's pool, against one copy of
the weights). Requests beyond K wait inside the library, first come first served.

Closing waits for the requests already running on the context, then frees it; any later
call raises :class:`ParakeetError`.
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

import numpy as np

from . import _native
from .audio import AudioSource, prepare_audio
from .errors import ParakeetError
from .transcript import Transcript

# Decoder names accepted by Context.transcribe → the C ABI's PARAKEET_DECODER_* value.
DECODERS: Dict[str, int] = {
    "default": _native.DECODER_DEFAULT,
    "ctc": _native.DECODER_CTC,
    "tdt": _native.DECODER_TRANSDUCER,
    "rnnt": _native.DECODER_TRANSDUCER,
    "transducer": _native.DECODER_TRANSDUCER,
}

_INT_MAX = 2**31 - 1


def decoder_code(decoder: Optional[str]) -> int:
    """``None``/"default", "ctc", "tdt"/"rnnt"/"transducer" (any case) → the C ABI value.

    "tdt", "rnnt" and "transducer" all select the model's transducer head, whichever kind it is.
    """
    if decoder is None:
        return _native.DECODER_DEFAULT
    if isinstance(decoder, str) and decoder.lower() in DECODERS:
        return DECODERS[decoder.lower()]
    raise ParakeetError(f"unknown decoder {decoder!r} (choose from {', '.join(DECODERS)})")


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParakeetError(f"{what} must be a positive integer, not {value!r}")
    return int(value)


class Context:
    """A loaded Parakeet model (GGUF file) that transcribes audio, thread-safely.

    ``concurrency``: how many requests run at once (K backends of the library's pool; 1 uses
    the process-wide backend shared by every context without a pool).
    ``threads``: with ``concurrency`` 1, sets the thread count of that process-wide backend
    (``parakeet_capi_set_threads``: it affects every such context in the process); with K > 1,
    the compute threads of each backend (``None``: the default budget, physical cores or
    ``$PARAKEET_THREADS``, divided by K). Results never depend on either setting.

    Raises :class:`ParakeetError` when the file cannot be loaded (the library's message).
    """

    def __init__(self, model_path: Union[str, "os.PathLike[str]"], *, concurrency: int = 1,
                 threads: Optional[int] = None) -> None:
        self._cond = threading.Condition()
        self._ptr: Any = None
        self._active = 0
        self._concurrency = 1
        concurrency = _positive_int(concurrency, "concurrency")
        if threads is not None:
            threads = _positive_int(threads, "threads")
        if not isinstance(model_path, (str, os.PathLike)):
            raise ParakeetError(f"model_path must be a path, not a {type(model_path).__name__}")
        self.model_path: str = os.fspath(model_path)
        ffi, lib = _native.load_or_raise()
        ptr = lib.parakeet_capi_load(self.model_path.encode("utf-8"))
        if ptr == ffi.NULL:
            raise ParakeetError(ffi.string(lib.parakeet_capi_load_error()).decode("utf-8", "replace"))
        self._ptr = ptr
        try:
            info_ptr = lib.parakeet_capi_model_info_json(ptr)
            if info_ptr == ffi.NULL:
                raise ParakeetError(_native.last_error())
            #: The model's description (``parakeet_capi_model_info_json``): arch, sample_rate,
            #: n_mels, d_model, n_layers, vocab_size, frame_sec, has_ctc, has_transducer, ...
            self.info: Dict[str, Any] = json.loads(_native.take_string(info_ptr))
            #: The rate audio is resampled to before it reaches the library (Hz).
            self.sample_rate: int = int(self.info["sample_rate"])
            if concurrency > 1:
                self.set_concurrency(concurrency, threads)
            elif threads is not None:
                _native.set_threads(threads)
        except BaseException:
            self.close()
            raise

    # ---- lifetime --------------------------------------------------------------------------
    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Wait for the requests running on this context, then free it. Idempotent."""
        with self._cond:
            if self._ptr is None:
                return
            ptr, self._ptr = self._ptr, None  # new calls are refused from here on
            while self._active:
                self._cond.wait()
        _, lib = _native.load()
        lib.parakeet_capi_free(ptr)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._ptr is None

    def __del__(self) -> None:
        ptr = getattr(self, "_ptr", None)
        if ptr is not None:
            try:
                _native.load()[1].parakeet_capi_free(ptr)
            except Exception:  # interpreter shutdown: the library may already be gone
                pass

    @contextmanager
    def _using(self) -> Iterator[Any]:
        """The live ``parakeet_ctx*``, counted as in use until the block ends."""
        with self._cond:
            if self._ptr is None:
                raise ParakeetError("the context is closed")
            self._active += 1
            ptr = self._ptr
        try:
            yield ptr
        finally:
            with self._cond:
                self._active -= 1
                if not self._active:
                    self._cond.notify_all()

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
            n = int(_native.load()[1].parakeet_capi_pool_working_set_bytes(ptr))
            if n < 0:
                raise ParakeetError(_native.last_error())
            return n

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
            if backends == 1:
                n = lib.parakeet_capi_set_concurrency(ptr, 1, 0)
            else:
                n = lib.parakeet_capi_set_concurrency(ptr, backends, threads_each or 0)
            if n < 0:
                raise ParakeetError(_native.last_error())
        if backends == 1 and threads_each is not None:
            _native.set_threads(threads_each)
        self._concurrency = int(n)
        return self._concurrency

    # ---- transcription ---------------------------------------------------------------------
    def transcribe(self, audio: AudioSource, *, sample_rate: Optional[int] = None,
                   decoder: Optional[str] = None, timestamps: bool = True) -> Transcript:
        """Transcribe one recording.

        ``audio``: a path (any format libsndfile reads: WAV, FLAC, OGG, MP3, ...), the file's
        bytes, a binary file object, or a numpy array (1-D mono or 2-D ``[frames, channels]``,
        mixed down; any float or int dtype, ints scaled to [-1, 1]) with its ``sample_rate``.
        Audio at another rate than the model's is resampled (soxr) first.
        ``decoder``: ``None``/"default" (the model's own head: the transducer for hybrids),
        "ctc", or "tdt"/"rnnt"/"transducer". ``timestamps=False`` returns the text only
        (``tokens`` and ``words`` empty), which skips building the JSON document.

        Raises :class:`ParakeetError` for unreadable audio, NaN/Inf samples, audio over the
        library's limit (1200 s), a decoder the model does not have, or a closed context.
        """
        if self._ptr is None:  # checked again under the lock below; this one saves decoding audio
            raise ParakeetError("the context is closed")
        code = decoder_code(decoder)
        samples = prepare_audio(audio, sample_rate=sample_rate, target_rate=self.sample_rate, check_finite=False)
        if samples.size > _INT_MAX:
            raise ParakeetError(f"audio of {samples.size} samples is too long for one request")
        ffi, lib = _native.load()
        fn = lib.parakeet_capi_transcribe_pcm_json if timestamps else lib.parakeet_capi_transcribe_pcm
        with self._using() as ptr:
            buf = ffi.from_buffer("float[]", samples)
            result = fn(ptr, buf, int(samples.size), self.sample_rate, code)
            if result == ffi.NULL:
                raise ParakeetError(_native.last_error())  # same thread, right after the call
            document = _native.take_string(result)
        if timestamps:
            return Transcript.from_json(document)
        return Transcript(text=document, duration=round(samples.size / self.sample_rate, 3),
                          frame_sec=float(self.info["frame_sec"]))

    def transcribe_many(self, items: Iterable[Any], *, workers: Optional[int] = None,
                        sample_rate: Optional[int] = None, decoder: Optional[str] = None,
                        timestamps: bool = True, return_exceptions: bool = False) -> List[Any]:
        """Transcribe several recordings concurrently; results come back in input order.

        Each item is anything :meth:`transcribe` accepts, or an ``(array, sample_rate)`` tuple;
        a bare array uses ``sample_rate``. ``workers`` threads submit the requests (default:
        :attr:`concurrency`, so every backend is busy and none queue).

        Every item is attempted. With ``return_exceptions=False`` (default) the first failure
        in input order is raised once all items have finished (its ``index`` attribute is the
        item's position); with ``return_exceptions=True`` a failed item's slot holds its
        :class:`ParakeetError` instead of a :class:`Transcript`.
        """
        items = list(items)
        workers = self._concurrency if workers is None else _positive_int(workers, "workers")

        def one(item: Any) -> Transcript:
            rate = sample_rate if isinstance(item, np.ndarray) else None
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], np.ndarray):
                item, rate = item
            return self.transcribe(item, sample_rate=rate, decoder=decoder, timestamps=timestamps)

        if not items:
            return []
        with ThreadPoolExecutor(max_workers=min(workers, len(items)), thread_name_prefix="parakeet") as pool:
            futures = [pool.submit(one, item) for item in items]
        results: List[Any] = []
        for index, future in enumerate(futures):
            error = future.exception()
            if error is None:
                results.append(future.result())
            elif isinstance(error, ParakeetError) and return_exceptions:
                results.append(error)
            else:
                setattr(error, "index", index)
                raise error
        return results
