"""Voice activity detection with Silero VAD v6, run by libparakeet (no onnxruntime, no torch).

    from parakeet_py import Vad
    vad = Vad(parakeet_py.vad.default_model())   # or Vad("silero-vad-f32.gguf")
    vad.segments(pcm, 16000)                     # [{"start": s, "end": s}, ...] seconds
    vad.probabilities(pcm, 16000)                # one per 32 ms frame
    with vad.stream(16000) as s: s.feed(chunk)   # {"events": [...], "probabilities": [...]}

Options (``segments(**options)``, ``stream(**options)``) are the C ABI's (docs/vad.md):
threshold, neg_threshold, min_speech, min_pause, speech_pad, max_segment, mode. Defaults are
Silero's get_speech_timestamps', whose segments these equal.
"""

import json
import os
import threading
from typing import Any, Dict, List, Optional, Union

import numpy as np

from . import _native
from .audio.prepare import pcm_samples
from .errors import InvalidArgument
from .hub import resolve_model
from .owned_handle import OwnedHandle, SharedModel, load_model_of_kind
from .silero_package import default_model, package_onnx

# Audio other than 8 kHz or a multiple of 16 kHz is resampled to this rate before the library.
MODEL_RATE = 16000


def _options(options: Dict[str, Any]) -> bytes:
    return json.dumps(options).encode("utf-8")


def _rate_for_library(pcm: np.ndarray, sample_rate: int):
    """(samples, rate) the library takes: 8000, 16000 and multiples of 16000 as they are
    (Silero's own rule), anything else resampled to 16 kHz with soxr."""
    if sample_rate == 8000 or (sample_rate >= 16000 and sample_rate % 16000 == 0):
        return pcm, sample_rate
    import soxr

    return np.ascontiguousarray(soxr.resample(pcm, sample_rate, MODEL_RATE, quality="HQ"), np.float32), MODEL_RATE


class Vad(SharedModel):
    """A loaded Silero VAD model (a ``silero_vad`` GGUF file). Thread-safe: calls and streams
    run on it at once; ``close()`` waits for the running calls and closes its streams."""

    _CLOSED = "the VAD model is closed"

    def __init__(self, model_path: Union[str, "os.PathLike[str]"], *, component: Optional[str] = None) -> None:
        """``component``: which component of a bundle to load (docs/bundles.md); None: a plain
        file, or the bundle's only loadable component."""
        super().__init__()
        self.model_path = resolve_model(model_path, kind="vad")
        self._ptr = load_model_of_kind(self.model_path, _native.MODEL_KIND_VAD, "a Silero VAD model", component)

    def detect(self, pcm: np.ndarray, sample_rate: int, **options: Any) -> Dict[str, Any]:
        """The library's whole result document: mode, duration, frame_sec, segments[, probabilities]."""
        self.handle()  # a closed model is refused before the audio is prepared
        samples, rate = _rate_for_library(pcm_samples(pcm), int(sample_rate))
        ffi, lib = _native.load()
        with self._using() as handle:
            ptr = lib.parakeet_capi_vad_pcm_json(handle, ffi.from_buffer("float[]", samples), len(samples), rate,
                                                 _options(options))
            return json.loads(_native.string_result(ptr))

    def probabilities(self, pcm: np.ndarray, sample_rate: int) -> np.ndarray:
        """Silero's speech probability of every 32 ms frame (float32, exactly the library's)."""
        return np.array(self.detect(pcm, sample_rate, probabilities=True)["probabilities"], dtype=np.float32)

    def segments(self, pcm: np.ndarray, sample_rate: int, **options: Any) -> List[Dict[str, float]]:
        """Speech segments [{"start", "end"}] in seconds."""
        return self.detect(pcm, sample_rate, **options)["segments"]

    def stream(self, sample_rate: int = MODEL_RATE, **options: Any) -> "VadStream":
        """A live detector for audio at ``sample_rate`` (16000 or 8000)."""
        _, lib = _native.load()
        with self._using() as handle:
            ptr = lib.parakeet_capi_vad_stream_begin(handle, int(sample_rate), _options(options))
            return self._lend(VadStream(self, _native.check_pointer(ptr), int(sample_rate)))


class VadStream(OwnedHandle):
    """Feeds audio to a VAD stream: each feed returns {"frame_sec", "first_frame", "events":
    [{"type": "start"|"end", "time"}], "probabilities"}. Events are final when they come and
    equal the one-shot segments."""

    _FREE = "parakeet_capi_vad_stream_free"
    _CLOSED = "the VAD stream is closed"

    def __init__(self, vad: Vad, ptr: Any, sample_rate: int) -> None:
        self._vad = vad  # keeps the model alive while the stream is
        self._ptr = ptr
        self._lock = threading.Lock()
        self.sample_rate = sample_rate

    def feed(self, pcm: np.ndarray, is_last: bool = False) -> Dict[str, Any]:
        samples = pcm_samples(pcm)
        ffi, lib = _native.load()
        with self._lock:
            ptr = lib.parakeet_capi_vad_stream_feed_json(self.handle(), ffi.from_buffer("float[]", samples),
                                                         len(samples), 1 if is_last else 0)
            return json.loads(_native.string_result(ptr))

    def finish(self) -> Dict[str, Any]:
        """Ends the audio (the partial last chunk is zero-padded) and returns the last events."""
        return self.feed(np.zeros(0, np.float32), is_last=True)

    def reset(self) -> None:
        with self._lock:
            if self._ptr is not None:
                _native.load()[1].parakeet_capi_vad_stream_reset(self._ptr)


def as_vad(vad: Union[Vad, str, "os.PathLike[str]"]) -> Vad:
    """A Vad as it is, or a Vad loaded from a path."""
    if isinstance(vad, Vad):
        return vad
    if isinstance(vad, (str, os.PathLike)):
        return Vad(vad)
    raise InvalidArgument(f"vad must be a parakeet_py.Vad or a path, not a {type(vad).__name__}")


__all__ = ["Vad", "VadStream", "as_vad", "default_model", "package_onnx", "MODEL_RATE"]
