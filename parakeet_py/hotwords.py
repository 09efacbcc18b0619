"""Hotwords (context biasing): :class:`Hotwords`, a compiled phrase graph, and the call behind
``Context.transcribe(hotwords=...)``.

The library compiles the phrases into an immutable token graph (parakeet.cpp's hotword API,
``parakeet_capi_context_*``, docs/api.md "Hotwords"); greedy decoding then favours them: each
matched token earns ``score x weight``. About 1.5 suits a TDT model, about 8 a CTC one; too high
and phrases appear where nobody said them.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional, Sequence

from . import _native
from .errors import InvalidArgument
from .transcript import Transcript


class Hotwords:
    """A compiled phrase graph (made by :meth:`Context.hotwords`). Immutable, usable from any
    thread and by any context; :meth:`close` (or ``with``) frees it, also while requests that
    use it still run (they hold their own reference)."""

    def __init__(self, handle: Any, phrases: Sequence[str], score: float):
        self._handle = handle
        self._lock = threading.Lock()
        self.phrases = tuple(phrases)
        self.score = score

    @property
    def info(self) -> Dict[str, Any]:
        """``{"states", "arcs", "phrases", "build_ms"}`` of the graph."""
        ffi, lib = _native.load()
        states, arcs, n = ffi.new("int*"), ffi.new("int*"), ffi.new("int*")
        ms = ffi.new("double*")
        lib.parakeet_capi_context_info(self.handle, states, arcs, n, ms)
        return {"states": states[0], "arcs": arcs[0], "phrases": n[0], "build_ms": ms[0]}

    @property
    def handle(self) -> Any:
        if self._handle is None:
            raise InvalidArgument("the hotwords are closed")
        return self._handle

    def close(self) -> None:
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            _native.load()[1].parakeet_capi_context_free(handle)

    def __enter__(self) -> "Hotwords":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        _native.free_in_finalizer(getattr(self, "_handle", None), "parakeet_capi_context_free")

    def __repr__(self) -> str:
        state = "closed" if self._handle is None else f"{len(self.phrases)} phrases"
        return f"<Hotwords {state}, score={self.score}>"


def compile_hotwords(ptr: Any, phrases: Sequence[str], score: float, weights: Optional[Sequence[float]]) -> Hotwords:
    phrases = list(phrases)
    if not phrases or not all(isinstance(p, str) for p in phrases):
        raise InvalidArgument("hotwords must be a non-empty list of strings")
    if weights is not None and len(weights) != len(phrases):
        raise InvalidArgument(f"{len(weights)} weights for {len(phrases)} phrases")
    ffi, lib = _native.load()
    encoded = [ffi.new("char[]", p.encode("utf-8")) for p in phrases]
    arr = ffi.new("const char*[]", encoded)
    w = ffi.new("float[]", [float(x) for x in weights]) if weights is not None else ffi.NULL
    handle = _native.check_pointer(lib.parakeet_capi_context_create_text(ptr, arr, w, len(phrases), float(score)))
    return Hotwords(handle, phrases, float(score))


def transcribe_with_hotwords(ptr: Any, buf: Any, n: int, sample_rate: int, hotwords: Hotwords,
                             acoustic_top_m: int, language: Optional[str] = None) -> Transcript:
    ffi, lib = _native.load()
    return Transcript.from_json(_native.string_result(lib.parakeet_capi_transcribe_pcm_contextual_json(
        ptr, buf, n, sample_rate, hotwords.handle, int(acoustic_top_m), _native.c_string(language))))
