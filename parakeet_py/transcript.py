"""Transcripts as Python values: :class:`Transcript`, :class:`Word` and :class:`Token`.

They are built from the library's JSON document (``parakeet_capi_transcribe_*_json``):
``{"text", "frame_sec", "duration", "words": [{"w", "start", "end", "conf"}],
"tokens": [{"id", "t", "conf", "dur"}]}``. Times become seconds everywhere (a token's
duration arrives in encoder frames and is multiplied by ``frame_sec``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List

from .errors import ParakeetError


@dataclass(frozen=True)
class Token:
    """One decoded token (a SentencePiece id).

    ``start``: seconds from the start of the audio (its encoder frame x ``frame_sec``);
    ``duration``: seconds (TDT: the predicted duration; RNN-T and CTC: see docs/api.md);
    ``confidence``: NeMo's max_prob confidence in [0, 1].
    """

    id: int
    start: float
    duration: float
    confidence: float

    def to_dict(self) -> Dict[str, Any]:
        return {"id": self.id, "start": self.start, "duration": self.duration, "confidence": self.confidence}


@dataclass(frozen=True)
class Word:
    """One word with its start and end in seconds and its confidence (the minimum over its tokens)."""

    text: str
    start: float
    end: float
    confidence: float

    def to_dict(self) -> Dict[str, Any]:
        return {"text": self.text, "start": self.start, "end": self.end, "confidence": self.confidence}


@dataclass(frozen=True)
class Transcript:
    """The result of one transcription.

    ``duration`` is the length of the audio in seconds and ``frame_sec`` the time one encoder
    frame covers. ``tokens`` and ``words`` are empty when timestamps were not requested.
    """

    text: str
    tokens: List[Token] = field(default_factory=list)
    words: List[Word] = field(default_factory=list)
    duration: float = 0.0
    frame_sec: float = 0.0

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready dict: ``{"text", "duration", "frame_sec", "words": [...], "tokens": [...]}``."""
        return {
            "text": self.text,
            "duration": self.duration,
            "frame_sec": self.frame_sec,
            "words": [w.to_dict() for w in self.words],
            "tokens": [t.to_dict() for t in self.tokens],
        }

    @classmethod
    def from_json(cls, document: str) -> "Transcript":
        """Parse the library's transcript JSON (see the module docstring)."""
        try:
            d = json.loads(document)
            frame_sec = float(d["frame_sec"])
            tokens = [
                Token(id=int(t["id"]), start=float(t["t"]), duration=round(float(t["dur"]) * frame_sec, 6),
                      confidence=float(t["conf"]))
                for t in d["tokens"]
            ]
            words = [
                Word(text=str(w["w"]), start=float(w["start"]), end=float(w["end"]), confidence=float(w["conf"]))
                for w in d["words"]
            ]
            return cls(text=str(d["text"]), tokens=tokens, words=words, duration=float(d["duration"]),
                       frame_sec=frame_sec)
        except (ValueError, KeyError, TypeError) as e:
            raise ParakeetError(f"the library returned a transcript this binding cannot read: {e}") from e
