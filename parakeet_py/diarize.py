"""Speaker diarization with Sortformer (NeMo's SortformerEncLabelModel), run by libparakeet.

    from parakeet_py import Diarizer
    d = Diarizer("sortformer.gguf")
    for seg in d.diarize("meeting.wav"):      # [Segment(speaker=0, start=0.32, end=2.87), ...]
        print(seg.speaker, seg.start, seg.end)
    d.probabilities("meeting.wav")            # [frames, speakers] float32, 80 ms frames

Options (``diarize(**options)``) are NeMo's post-processing parameters, as the C ABI takes them
(docs/diarization.md): onset, offset, pad_onset, pad_offset, min_duration_on, min_duration_off.
"""

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

import numpy as np

from . import _native
from .audio import AudioSource, prepare_audio
from .errors import InvalidArgument, InvalidAudio
from .owned_handle import SharedModel, load_model_of_kind

if TYPE_CHECKING:
    from .context import ProgressCallback
    from .diarize_stream import DiarizerStream

# The audio is brought to this rate here; the library resamples it to the model's if that differs.
AUDIO_RATE = 16000
_INT_MAX = 2**31 - 1


@dataclass(frozen=True, order=True)
class Segment:
    """One speaker's turn: speakers are numbered from 0 in order of arrival; seconds."""

    speaker: int
    start: float
    end: float


class Diarizer(SharedModel):
    """A loaded Sortformer diarization model (a GGUF file with parakeet.arch "diarization").
    Thread-safe: calls run on it at once (``concurrency`` backends serve them in parallel)."""

    _CLOSED = "the diarizer is closed"

    def __init__(self, model_path: Union[str, "os.PathLike[str]"], *, concurrency: int = 1) -> None:
        super().__init__()
        self.model_path = os.fspath(model_path)
        self._ptr = load_model_of_kind(model_path, _native.MODEL_KIND_DIARIZATION, "a diarization model")
        if concurrency > 1 and _native.load()[1].parakeet_capi_set_concurrency(self._ptr, int(concurrency), 0) < 0:
            self.close()
            _native.raise_last_error()

    def document(self, audio: AudioSource, *, sample_rate: Optional[int] = None,
                 progress: Optional["ProgressCallback"] = None, **options: Any) -> Dict[str, Any]:
        """The library's whole result: {"speakers", "segments"[, "frame_sec", "probabilities"]}.
        ``progress`` as for Context.transcribe: the fraction diarized (docs/api.md says where
        the reports come from); ``False`` cancels, raising :class:`Cancelled`."""
        from .context import _call_with_progress  # context imports transcript, which imports this module

        if progress is not None and not callable(progress):
            raise InvalidArgument(f"progress must be callable, not a {type(progress).__name__}")
        samples = prepare_audio(audio, sample_rate=sample_rate, target_rate=AUDIO_RATE, check_finite=False)
        if samples.size > _INT_MAX:
            raise InvalidAudio(f"audio of {samples.size} samples is too long for one request")
        ffi, lib = _native.load()
        buf, n, opts = ffi.from_buffer("float[]", samples), int(samples.size), json.dumps(options).encode("utf-8")
        with self._using() as handle:
            if progress is None:
                return json.loads(_native.string_result(lib.parakeet_capi_diarize_pcm_with(handle, buf, n, AUDIO_RATE,
                                                                                           opts)))
            return json.loads(_call_with_progress(progress, lambda fn, user_data: (
                lib.parakeet_capi_diarize_pcm_with_progress(handle, buf, n, AUDIO_RATE, opts, fn, user_data))))

    def diarize(self, audio: AudioSource, *, sample_rate: Optional[int] = None,
                progress: Optional["ProgressCallback"] = None, **options: Any) -> List[Segment]:
        """Speaker segments, sorted by start then speaker. ``audio`` and ``progress`` as for
        Context.transcribe."""
        doc = self.document(audio, sample_rate=sample_rate, progress=progress, **options)
        return [Segment(int(s["speaker"]), float(s["start"]), float(s["end"])) for s in doc["segments"]]

    def stream(self, latency: Union[str, int] = "model") -> "DiarizerStream":
        """A live diarization (:class:`~parakeet_py.diarize_stream.DiarizerStream`) at a latency
        preset: "model" (the checkpoint's own streaming configuration), "low" (1.04 s),
        "very_low" (0.64 s), "ultra_low" (0.32 s), or parakeet.cpp's numbers 0..3. Raises
        :class:`Unsupported` for a model that normalises its mel features per_feature."""
        from .diarize_stream import DiarizerStream, latency_number

        number = latency_number(latency)
        ffi, lib = _native.load()
        with self._using() as handle:
            s = lib.parakeet_capi_diarize_stream_begin_latency(handle, number)
            if s == ffi.NULL:
                _native.raise_last_error()
            return self._lend(DiarizerStream(self, s))

    def probabilities(self, audio: AudioSource, *, sample_rate: Optional[int] = None) -> np.ndarray:
        """Per-frame speaker probabilities [frames, speakers] (float32, exactly the library's)."""
        doc = self.document(audio, sample_rate=sample_rate, probabilities=True)
        rows = np.array(doc["probabilities"], dtype=np.float32).reshape(doc["speakers"], -1)
        return np.ascontiguousarray(rows.T)
