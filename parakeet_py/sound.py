"""Sound-event tagging with CED (Xiaomi's AudioSet taggers, ced.cpp's ``ced`` GGUF files), run
by libparakeet.

    from parakeet_py import SoundTagger
    tagger = SoundTagger("ced-tiny-q8_0.gguf")   # or a name: "mudler/ced-gguf/ced-tiny-q8_0.gguf"
    tagger.classify(pcm, 16000, top_k=5)    # [{"index", "label", "score"}, ...] highest first
    tagger.scores(pcm, 16000)               # every class's probability, in class order
    tagger.events(pcm, 16000)               # the stream's segments over the whole clip
    with tagger.stream() as s:              # live events: 3 s windows every 1 s (docs/sound.md)
        s.feed(chunk)                       # segments closed: [{"index", "label", "start", "end", "peak"}]
        s.finish()

Audio at another rate than the model's 16 kHz is resampled with soxr first.
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

MODEL_RATE = 16000
# parakeet_sound_opts' fields, each a keyword of SoundTagger.stream().
STREAM_OPTIONS = ("window_sec", "hop_sec", "on_threshold", "off_threshold", "min_duration_sec", "top_k")


def _at_model_rate(pcm: np.ndarray, sample_rate: int) -> np.ndarray:
    samples = pcm_samples(pcm)
    if int(sample_rate) == MODEL_RATE:
        return samples
    import soxr

    return np.ascontiguousarray(soxr.resample(samples, int(sample_rate), MODEL_RATE, quality="HQ"), np.float32)


class SoundTagger(SharedModel):
    """A loaded CED sound tagger. Thread-safe: calls and streams run on it at once; ``close()``
    waits for the running calls and closes its streams."""

    _CLOSED = "the sound tagger is closed"

    def __init__(self, model_path: Union[str, "os.PathLike[str]"], *, component: Optional[str] = None) -> None:
        """``model_path``: a GGUF file or a model name (docs/models.md); ``component``: which
        component of a bundle to load (docs/bundles.md); None: a plain file, or the bundle's only
        ced component."""
        super().__init__()
        self.model_path = resolve_model(model_path, kind="sound")
        self._ptr = load_model_of_kind(self.model_path, _native.MODEL_KIND_SOUND, "a CED sound model", component)
        ffi, lib = _native.load()
        self.labels: List[str] = [ffi.string(lib.parakeet_capi_class_label(self._ptr, i)).decode("utf-8")
                                  for i in range(lib.parakeet_capi_num_classes(self._ptr))]

    def classify(self, pcm: np.ndarray, sample_rate: int = MODEL_RATE, top_k: int = 5) -> List[Dict[str, Any]]:
        """The top_k classes of the clip (all for top_k <= 0), highest score first."""
        self.handle()  # a closed model is refused before the audio is prepared
        samples = _at_model_rate(pcm, sample_rate)
        ffi, lib = _native.load()
        with self._using() as handle:
            ptr = lib.parakeet_capi_sound_classify_pcm_json(handle, ffi.from_buffer("float[]", samples), len(samples),
                                                            MODEL_RATE, int(top_k))
            return json.loads(_native.string_result(ptr))

    def scores(self, pcm: np.ndarray, sample_rate: int = MODEL_RATE) -> np.ndarray:
        """Every class's probability for the clip (float32, in class order)."""
        out = np.zeros(len(self.labels), np.float32)
        for tag in self.classify(pcm, sample_rate, top_k=0):
            out[tag["index"]] = tag["score"]
        return out

    def events(self, pcm: np.ndarray, sample_rate: int = MODEL_RATE, **options: Any) -> List[Dict[str, Any]]:
        """The sound events of a whole clip by the stream's rules (one feed with is_last), by
        start time: [{"index", "label", "start", "end", "peak"}]; options as stream()'s."""
        samples = _at_model_rate(pcm, sample_rate)
        with self.stream(**options) as s:
            segments = s.feed(samples, is_last=True)
        return sorted(segments, key=lambda e: (e["start"], e["index"]))

    def stream(self, **options: Any) -> "SoundStream":
        """A live tagger of 16 kHz audio; options: window_sec, hop_sec, on_threshold, off_threshold,
        min_duration_sec, top_k (defaults 3, 1, 0.4, 0.3, 0.3, 5)."""
        unknown = sorted(set(options) - set(STREAM_OPTIONS))
        if unknown:
            raise InvalidArgument(f"unknown sound stream option {unknown[0]!r} (known: {', '.join(STREAM_OPTIONS)})")
        ffi, lib = _native.load()
        opts = ffi.new("parakeet_sound_opts*")
        lib.parakeet_capi_sound_opts_default(opts)
        for key, value in options.items():
            setattr(opts, key, value)
        with self._using() as handle:
            ptr = _native.check_pointer(lib.parakeet_capi_sound_stream_begin(handle, opts))
            return self._lend(SoundStream(self, ptr))


class SoundStream(OwnedHandle):
    """Feeds 16 kHz audio to a sound stream; each feed returns the segments it closed."""

    _FREE = "parakeet_capi_sound_stream_free"
    _CLOSED = "the sound stream is closed"

    def __init__(self, tagger: SoundTagger, ptr: Any) -> None:
        self._tagger = tagger  # keeps the model alive while the stream is
        self._ptr = ptr
        self._lock = threading.Lock()

    def _segments(self, call, *args: Any) -> List[Dict[str, Any]]:
        ffi, lib = _native.load()
        out = ffi.new("parakeet_sound_segment**")
        n = ffi.new("int*")
        _native.check_status(call(*args, out, n))
        try:
            return [{"index": s.class_index, "label": ffi.string(s.label).decode("utf-8"), "start": round(s.start, 3),
                     "end": round(s.end, 3), "peak": round(s.peak, 4)} for s in (out[0][i] for i in range(n[0]))]
        finally:
            lib.parakeet_capi_free_sound_segments(out[0])

    def feed(self, pcm: np.ndarray, is_last: bool = False) -> List[Dict[str, Any]]:
        samples = pcm_samples(pcm)
        ffi, lib = _native.load()
        with self._lock:
            return self._segments(lib.parakeet_capi_sound_stream_feed, self.handle(),
                                  ffi.from_buffer("float[]", samples), len(samples), 1 if is_last else 0)

    def finish(self) -> List[Dict[str, Any]]:
        """Ends the audio: scores the unscored tail and closes every open sound."""
        return self.feed(np.zeros(0, np.float32), is_last=True)

    def active(self) -> List[Dict[str, Any]]:
        """The sounds open now."""
        with self._lock:
            return self._segments(_native.load()[1].parakeet_capi_sound_stream_active, self.handle())

    def drain_scores(self) -> List[Dict[str, Any]]:
        """The windows scored since the last drain: [{"start", "end", "tags": [{"index", "label", "score"}]}]."""
        with self._lock:
            return json.loads(_native.string_result(_native.load()[1].parakeet_capi_sound_stream_drain_scores_json(
                self.handle())))


__all__ = ["SoundTagger", "SoundStream", "MODEL_RATE", "STREAM_OPTIONS"]
