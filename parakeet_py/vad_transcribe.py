"""Transcription cut at pauses, silence skipped: the VAD's speech segments (Silero's, with their
padding) are grouped in order into chunks of at most `max_segment` seconds of speech; each
chunk is the concatenation of its segments' audio, transcribed on its own; every word and token
time is mapped back from the chunk onto the recording's timeline, segment by segment (as
faster-whisper's VAD filter does)."""

import bisect
import dataclasses
import os
from typing import Any, Callable, Dict, List, Tuple, Union

import numpy as np

from .errors import InvalidArgument
from .transcript import Transcript
from .vad import Vad

VadSource = Union[Vad, str, "os.PathLike[str]"]
DEFAULT_MAX_SEGMENT = 30.0


def as_vad(vad: VadSource) -> Vad:
    """A Vad as it is, or a Vad loaded from a path."""
    if isinstance(vad, Vad):
        return vad
    if isinstance(vad, (str, os.PathLike)):
        return Vad(vad)
    raise InvalidArgument(f"vad must be a parakeet_py.Vad or a path, not a {type(vad).__name__}")


def chunks_of(segments: List[Dict[str, float]], rate: int, n: int, max_segment: float) -> List[List[Tuple[int, int]]]:
    """The speech segments as sample spans, grouped in order into chunks whose total length is
    at most max_segment seconds (a longer segment is a chunk of its own: the VAD's max_segment
    already cut it)."""
    cap = int(max_segment * rate)
    chunks: List[List[Tuple[int, int]]] = []
    total = 0
    for s in segments:
        first, last = int(round(s["start"] * rate)), min(n, int(round(s["end"] * rate)))
        if last <= first:
            continue
        if not chunks or total + (last - first) > cap:
            chunks.append([])
            total = 0
        chunks[-1].append((first, last))
        total += last - first
    return chunks


class _TimeMap:
    """Chunk time → recording time, for a chunk made of the given spans laid end to end."""

    def __init__(self, spans: List[Tuple[int, int]], rate: int) -> None:
        self.starts: List[float] = []  # where each span begins in the chunk (seconds)
        self.origins: List[float] = []  # ... and in the recording
        at = 0
        for first, last in spans:
            self.starts.append(at / rate)
            self.origins.append(first / rate)
            at += last - first

    def __call__(self, t: float) -> float:
        i = max(0, bisect.bisect_right(self.starts, t) - 1)
        return self.origins[i] + (t - self.starts[i])


def transcribe_cut(samples: np.ndarray, rate: int, vad: Vad, options: Dict[str, Any],
                   transcribe_chunk: Callable[[np.ndarray], Transcript]) -> Transcript:
    """`samples` (mono float32 at `rate`) transcribed chunk by chunk; `transcribe_chunk` runs one
    chunk's audio and returns its transcript with times from the chunk's start."""
    opts = dict(options)
    max_segment = float(opts.setdefault("max_segment", DEFAULT_MAX_SEGMENT))
    if opts.get("mode", "speech") != "speech":
        raise InvalidArgument("vad_options: the cut uses speech segments; mode is not an option here")
    segments = vad.segments(samples, rate, **opts)
    texts: List[str] = []
    words, tokens = [], []
    frame_sec, attention = 0.0, None
    for spans in chunks_of(segments, rate, len(samples), max_segment):
        audio = np.concatenate([samples[a:b] for a, b in spans])
        t = transcribe_chunk(audio)
        to_file = _TimeMap(spans, rate)
        frame_sec, attention = t.frame_sec, t.attention
        if t.text:
            texts.append(t.text)
        for w in t.words:
            start = to_file(w.start)
            words.append(dataclasses.replace(w, start=start, end=max(start, to_file(w.end))))
        tokens += [dataclasses.replace(k, start=to_file(k.start)) for k in t.tokens]
    return Transcript(text=" ".join(texts), tokens=tokens, words=words, duration=round(len(samples) / rate, 3),
                      frame_sec=frame_sec, attention=attention)


__all__ = ["transcribe_cut", "chunks_of", "as_vad", "VadSource"]
