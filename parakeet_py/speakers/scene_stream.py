"""The scene stream: who said what, by name, and what else is heard, live (the C ABI's
``parakeet_capi_scene_stream_*``, parakeet.cpp's ABI 8/9; docs/api.md, "The scene stream").

    with ctx.scene_stream(diarizer=d, tagger=t, speaker_encoder=enc, registry=reg) as s:
        for pcm in pieces:                    # 16 kHz float32 mono
            doc = s.feed(pcm)                 # {"t", "names", "utterances", "words", "speakers", "sounds", "active"}
        doc = s.finish()

Each part is optional (the Context's ASR included: ``SceneStream.begin`` takes ``context=None``);
the names need the diarizer, the speaker encoder and the registry together. Each feed returns the
library's document of what it produced; what commits does not depend on how the audio is cut.
"""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Any, Dict, List, Optional, Union

import numpy as np

from .. import _native
from ..audio.prepare import pcm_samples
from ..errors import InvalidArgument
from ..owned_handle import OwnedHandle, SharedModel
from .diarize_stream import latency_number

# Options the scene stream takes (parakeet_scene_opts' speaker fields; sound_* go to the sound part).
SPEAKER_OPTIONS = ("accept_threshold", "margin", "min_voice_sec", "refresh_sec", "max_voice_sec")
SOUND_OPTIONS = ("window_sec", "hop_sec", "on_threshold", "off_threshold", "min_duration_sec", "top_k")


class SceneStream(OwnedHandle):
    """One live scene (made by :meth:`Context.scene_stream` or :func:`begin`). It keeps every
    model and the registry it uses alive; closing one of the models closes it. One call at a
    time (serialised here)."""

    _FREE = "parakeet_capi_scene_stream_free"
    _CLOSED = "the scene stream is closed"

    def __init__(self, parts: List[Any], registry: Any, ptr: Any) -> None:
        self._parts = parts          # the models the library's stream borrows
        self._registry = registry    # likewise
        self._ptr = ptr
        self._lock = threading.Lock()

    def feed(self, pcm: np.ndarray, is_last: bool = False) -> Dict[str, Any]:
        """Feeds 16 kHz audio (a numpy array, any length, 0 included); returns the document of
        what this call committed, closed and holds open. ``is_last`` ends the audio. Raises the
        library's error (a bad sample, a feed after the last, a part's failure)."""
        samples = pcm_samples(pcm)
        ffi, lib = _native.load()
        with self._lock:
            if self._registry is not None:
                self._registry.handle()  # InvalidArgument once the registry is closed
            doc = _native.string_result(lib.parakeet_capi_scene_stream_feed_json(
                self.handle(), ffi.from_buffer("float[]", samples), int(samples.size), 1 if is_last else 0))
        return json.loads(doc)

    def finish(self) -> Dict[str, Any]:
        """Ends the audio: every part finishes and what remains commits and closes."""
        return self.feed(np.zeros(0, np.float32), is_last=True)

    def drain_scores(self) -> List[Dict[str, Any]]:
        """The sound part's windows scored since the last drain ([] without a tagger)."""
        with self._lock:
            return json.loads(_native.string_result(
                _native.load()[1].parakeet_capi_scene_stream_drain_scores_json(self.handle())))


def begin(context: Any = None, *, diarizer: Any = None, tagger: Any = None, speaker_encoder: Any = None,
          registry: Any = None, latency: Union[str, int, None] = None, **options: Any) -> SceneStream:
    """A new :class:`SceneStream` on the models given (None: that part is left out). ``latency``:
    the diarizer's preset ("model", "low", "very_low", "ultra_low" or 0..3); options: the
    speaker naming's ``accept_threshold``, ``margin``, ``min_voice_sec``, ``refresh_sec``,
    ``max_voice_sec`` and the sound stream's ``window_sec``, ``hop_sec``, ``on_threshold``,
    ``off_threshold``, ``min_duration_sec``, ``top_k``."""
    unknown = sorted(set(options) - set(SPEAKER_OPTIONS) - set(SOUND_OPTIONS))
    if unknown:
        known = ", ".join(SPEAKER_OPTIONS + SOUND_OPTIONS)
        raise InvalidArgument(f"unknown scene stream option {unknown[0]!r} (known: {known})")
    if registry is not None and speaker_encoder is None:
        raise InvalidArgument("registry= names speakers with a speaker_encoder=: give both")
    ffi, lib = _native.load()
    opts = ffi.new("parakeet_scene_opts*")
    lib.parakeet_capi_scene_opts_default(opts)
    if latency is not None:
        opts.diar_latency = latency_number(latency)
    for key, value in options.items():
        if key in SPEAKER_OPTIONS:
            setattr(opts, "speaker_" + key, value)
        else:
            setattr(opts.sound, key, value)
    models = [m for m in (context, diarizer, tagger, speaker_encoder) if m is not None]
    if not models:
        raise InvalidArgument("a scene stream needs at least one model")
    for m in models:
        if not isinstance(m, SharedModel):
            raise InvalidArgument(f"a scene stream's parts are loaded models, not a {type(m).__name__}")
    # Every model counted in use while the library's stream is made, then lent to it.
    with contextlib.ExitStack() as using:
        handles = {id(m): using.enter_context(m._using()) for m in models}

        def ptr_of(model: Optional[Any]) -> Any:
            return ffi.NULL if model is None else handles[id(model)]

        reg = ffi.NULL if registry is None else registry.handle()
        stream = SceneStream(models, registry, _native.check_pointer(lib.parakeet_capi_scene_stream_begin_speaker(
            ptr_of(context), ptr_of(diarizer), ptr_of(tagger), ptr_of(speaker_encoder), reg, opts)))
        for model in models:
            model._lend(stream)
    return stream


__all__ = ["SceneStream", "begin", "SPEAKER_OPTIONS", "SOUND_OPTIONS"]
