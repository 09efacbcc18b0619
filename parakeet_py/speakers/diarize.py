"""Speaker diarization with Sortformer (NeMo's SortformerEncLabelModel), run by libparakeet.

    from parakeet_py import Diarizer
    d = Diarizer("sortformer.gguf")
    for seg in d.diarize("meeting.wav"):      # [Segment(speaker=0, start=0.32, end=2.87), ...]
        print(seg.speaker, seg.start, seg.end)
    d.probabilities("meeting.wav")            # [frames, speakers] float32, 80 ms frames

Options (``diarize(**options)``) are NeMo's post-processing parameters, as the C ABI takes them
(docs/diarization.md): onset, offset, pad_onset, pad_offset, min_duration_on, min_duration_off.

:func:`word_speakers` and :func:`speaker_utterances` give words from anywhere (a live stream's,
say) speakers from segments from anywhere (a :class:`~parakeet_py.speakers.diarize_stream.DiarizerStream`'s)
by the library's own rules, the ones ``Context.transcribe(diarizer=)`` applies.
"""

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _native
from ..audio.prepare import AudioSource, request_samples
from ..hub import resolve_model
from ..owned_handle import SharedModel, load_model_of_kind
from ..progress import ProgressCallback, call_with_progress, check_progress
from ..transcript import Segment, Utterance
from .diarize_stream import DiarizerStream, latency_number

# The audio is brought to this rate here; the library resamples it to the model's if that differs.
AUDIO_RATE = 16000


class Diarizer(SharedModel):
    """A loaded Sortformer diarization model (a GGUF file with parakeet.arch "diarization").
    Thread-safe: calls run on it at once (``concurrency`` backends serve them in parallel)."""

    _CLOSED = "the diarizer is closed"

    def __init__(self, model_path: Union[str, "os.PathLike[str]"], *, concurrency: int = 1,
                 component: Optional[str] = None) -> None:
        """``component``: which component of a bundle to load (docs/bundles.md); None: a plain
        file, or the bundle's only loadable component."""
        super().__init__()
        self.model_path = resolve_model(model_path, kind="diarize")
        self._ptr = load_model_of_kind(self.model_path, _native.MODEL_KIND_DIARIZATION, "a diarization model",
                                       component)
        if concurrency > 1 and _native.load()[1].parakeet_capi_set_concurrency(self._ptr, int(concurrency), 0) < 0:
            self.close()
            _native.raise_last_error()

    def document(self, audio: AudioSource, *, sample_rate: Optional[int] = None,
                 progress: Optional[ProgressCallback] = None, **options: Any) -> Dict[str, Any]:
        """The library's whole result: {"speakers", "segments"[, "frame_sec", "probabilities"]}.
        ``progress`` as for Context.transcribe: the fraction diarized (docs/api.md says where
        the reports come from); ``False`` cancels, raising :class:`Cancelled`."""
        check_progress(progress)
        samples = request_samples(audio, sample_rate, AUDIO_RATE)
        ffi, lib = _native.load()
        buf, n, opts = ffi.from_buffer("float[]", samples), int(samples.size), json.dumps(options).encode("utf-8")
        with self._using() as handle:
            if progress is None:
                return json.loads(_native.string_result(lib.parakeet_capi_diarize_pcm_with(handle, buf, n, AUDIO_RATE,
                                                                                           opts)))
            return json.loads(call_with_progress(progress, lambda fn, user_data: (
                lib.parakeet_capi_diarize_pcm_with_progress(handle, buf, n, AUDIO_RATE, opts, fn, user_data))))

    def diarize(self, audio: AudioSource, *, sample_rate: Optional[int] = None,
                progress: Optional[ProgressCallback] = None, **options: Any) -> List[Segment]:
        """Speaker segments, sorted by start then speaker. ``audio`` and ``progress`` as for
        Context.transcribe."""
        doc = self.document(audio, sample_rate=sample_rate, progress=progress, **options)
        return [Segment(int(s["speaker"]), float(s["start"]), float(s["end"])) for s in doc["segments"]]

    def stream(self, latency: Union[str, int] = "model") -> DiarizerStream:
        """A live diarization (:class:`~parakeet_py.speakers.diarize_stream.DiarizerStream`) at a latency
        preset: "model" (the checkpoint's own streaming configuration), "low" (1.04 s),
        "very_low" (0.64 s), "ultra_low" (0.32 s), or parakeet.cpp's numbers 0..3. Raises
        :class:`Unsupported` for a model that normalises its mel features per_feature."""
        number = latency_number(latency)
        ffi, lib = _native.load()
        with self._using() as handle:
            s = lib.parakeet_capi_diarize_stream_begin_latency(handle, number)
            if s == ffi.NULL:
                _native.raise_last_error()
            return self._lend(DiarizerStream(self, s))

    def diarize_named(self, audio: AudioSource, encoder: Any, registry: Any = None, *,
                      sample_rate: Optional[int] = None, accept: float = 0.0, margin: float = 0.0,
                      profiles: bool = False) -> Dict[str, Any]:
        """:meth:`document` plus ``"names"``: per speaker slot, ``{"name", "score"}`` from
        ``registry`` (a :class:`~parakeet_py.VoiceRegistry`) for the slot's clean voice embedded
        with ``encoder`` (a :class:`~parakeet_py.SpeakerEncoder`); ``""`` with score 0 under 2 s
        of clean voice or without a registry. ``accept`` / ``margin`` 0: 0.5 / 0.05. With
        ``profiles``, also ``"speaker_profiles"``: per slot its clean voice's intervals and
        embedding, or why there is none (docs/api.md, "Speaker encoder and voice registry")."""
        samples = request_samples(audio, sample_rate, AUDIO_RATE)
        ffi, lib = _native.load()
        reg = registry.handle() if registry is not None else ffi.NULL
        call = lib.parakeet_capi_diarize_profiles_pcm_json if profiles else lib.parakeet_capi_diarize_named_pcm_json
        with self._using() as handle, encoder._using() as speaker:
            return json.loads(_native.string_result(call(
                handle, speaker, reg, ffi.from_buffer("float[]", samples), int(samples.size), AUDIO_RATE,
                float(accept), float(margin))))

    def probabilities(self, audio: AudioSource, *, sample_rate: Optional[int] = None,
                      progress: Optional[ProgressCallback] = None) -> np.ndarray:
        """Per-frame speaker probabilities [frames, speakers] (float32, exactly the library's);
        ``progress`` as for :meth:`diarize`."""
        doc = self.document(audio, sample_rate=sample_rate, progress=progress, probabilities=True)
        rows = np.array(doc["probabilities"], dtype=np.float32).reshape(doc["speakers"], -1)
        return np.ascontiguousarray(rows.T)


def _attribute(words: Sequence[Any], segments: Sequence[Segment]) -> Any:
    """parakeet_capi_word_speakers on ``words`` and ``segments``: (speakers, utterance numbers)."""
    ffi, lib = _native.load_or_raise()
    segs = ffi.new("parakeet_diar_segment[]", max(1, len(segments)))
    for i, s in enumerate(segments):
        segs[i].speaker, segs[i].start, segs[i].end = int(s.speaker), float(s.start), float(s.end)
    starts = ffi.new("double[]", [float(w.start) for w in words] or [0.0])
    ends = ffi.new("double[]", [float(w.end) for w in words] or [0.0])
    speakers, numbers = ffi.new("int[]", max(1, len(words))), ffi.new("int[]", max(1, len(words)))
    _native.check_status(lib.parakeet_capi_word_speakers(segs, len(segments), starts, ends, len(words), speakers,
                                                         numbers))
    return [int(speakers[i]) for i in range(len(words))], [int(numbers[i]) for i in range(len(words))]


def word_speakers(words: Sequence[Any], segments: Sequence[Segment]) -> List[int]:
    """The speaker of each word (-1: none near it) by the library's rule
    (parakeet_capi_word_speakers, docs/api.md): the segment that overlaps it most (the first in
    the order given on a tie), else the nearest within 0.5 s (the later on a tie), else -1.
    ``words``: anything with ``start`` and ``end`` seconds (:class:`~parakeet_py.Word`) on the
    segments' timeline; ``segments``: :class:`Segment` objects (times taken to 10 ms), in the
    order the rule scans them (``diarize()`` gives them by start then speaker; a stream's: the
    closed ones as they came, then its ``active`` ones). Raises :class:`InvalidArgument` for a
    negative speaker, a time that is not finite or a span that ends before it starts."""
    return _attribute(words, segments)[0]


def speaker_utterances(words: Sequence[Any], segments: Sequence[Segment]) -> List[Utterance]:
    """The words (:class:`~parakeet_py.Word`, with ``text`` and ``confidence``) grouped into
    utterances by the library's rule, each word's speaker as :func:`word_speakers` gives it: a
    run of one speaker's words with pauses of at most 0.5 s, their texts joined by spaces, the
    first start, the latest end, the minimum confidence (what ``Transcript.utterances`` holds)."""
    return attribute_words(words, segments)[1]


def attribute_words(words: Sequence[Any], segments: Sequence[Segment]) -> Tuple[List[int], List[Utterance]]:
    """:func:`word_speakers` and :func:`speaker_utterances` from one library call."""
    speakers, numbers = _attribute(words, segments)
    runs: List[List[int]] = []
    for i, n in enumerate(numbers):
        if n == len(runs):
            runs.append([])
        runs[n].append(i)
    return speakers, [Utterance(speakers[run[0]], " ".join(words[i].text for i in run), float(words[run[0]].start),
                                max(float(words[i].end) for i in run), min(float(words[i].confidence) for i in run))
                      for run in runs]
