"""Transcription cut at pauses: the VAD's `segments` mode splits the recording into pieces of at
most `max_segment` seconds that start and end at speech boundaries; each piece is transcribed on
its own (the silence between pieces is skipped), and every word and token time is moved back
onto the recording's timeline."""

import dataclasses
import os
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np

from .errors import InvalidArgument
from .transcript import Transcript
from .vad import Vad

VadSource = Union[Vad, str, "os.PathLike[str]"]


def as_vad(vad: VadSource) -> Vad:
    """A Vad as it is, or a Vad loaded from a path."""
    if isinstance(vad, Vad):
        return vad
    if isinstance(vad, (str, os.PathLike)):
        return Vad(vad)
    raise InvalidArgument(f"vad must be a parakeet_py.Vad or a path, not a {type(vad).__name__}")


def transcribe_cut(samples: np.ndarray, rate: int, vad: Vad, options: Dict[str, Any],
                   transcribe_piece: Callable[[np.ndarray], Transcript]) -> Transcript:
    """`samples` (mono float32 at `rate`) transcribed piece by piece; `transcribe_piece` runs
    one piece and returns its transcript with times from the piece's start."""
    opts = dict(options)
    opts.setdefault("max_segment", 30.0)
    pieces = vad.segments(samples, rate, mode="segments", **opts)
    texts: List[str] = []
    words, tokens = [], []
    frame_sec, attention = 0.0, None
    for piece in pieces:
        first = int(round(piece["start"] * rate))
        last = min(len(samples), int(round(piece["end"] * rate)))
        if last <= first:
            continue
        t = transcribe_piece(samples[first:last])
        offset = first / rate
        frame_sec, attention = t.frame_sec, t.attention
        if t.text:
            texts.append(t.text)
        words += [dataclasses.replace(w, start=w.start + offset, end=w.end + offset) for w in t.words]
        tokens += [dataclasses.replace(k, start=k.start + offset) for k in t.tokens]
    return Transcript(text=" ".join(texts), tokens=tokens, words=words, duration=round(len(samples) / rate, 3),
                      frame_sec=frame_sec, attention=attention)


__all__ = ["transcribe_cut", "as_vad", "VadSource"]
