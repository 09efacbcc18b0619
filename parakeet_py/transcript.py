"""Transcripts as Python values: :class:`Transcript`, :class:`Word` and :class:`Token`, and the
speaker types a diarized one holds, :class:`Segment` and :class:`Utterance`.

They are built from the library's JSON document (``parakeet_capi_transcribe_*_json``):
``{"text", "frame_sec", "duration", "words": [{"w", "start", "end", "conf"}],
"tokens": [{"id", "t", "conf", "dur"}], "attention": {"mode", ["left", "right"]}}``. Times become seconds everywhere (a token's
duration arrives in encoder frames and is multiplied by ``frame_sec``).

A speaker-attributed transcript (``Context.transcribe(audio, diarizer=d)``) comes from
``parakeet_capi_transcribe_and_diarize_json``: the same transcript document under
``"transcript"``, each word's ``speaker`` under ``"words"``, the diarization ``"segments"`` and
the ``"utterances"`` (runs of one speaker's words; docs/api.md has the rule). The named form
(``Context.transcribe(audio, diarizer=d, speakers=registry, speaker_encoder=enc)``,
``parakeet_capi_transcribe_and_diarize_named_json``) adds ``"name"`` and ``"name_score"`` to each
word and utterance.

The speaker types live here, not in :mod:`.speakers`, so that the speakers room, the streams
and the transcript all import them without a circle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from .errors import InternalError

#: An attention setting as the Python API spells it: "auto", "full", or ``(left, right)`` for
#: local attention.
Attention = Union[str, Tuple[int, int]]


def attention_from_json(d: Dict[str, Any]) -> Attention:
    """The library's ``{"mode": ..., ["left", "right"]}`` object → "auto", "full" or ``(left, right)``."""
    if d["mode"] == "local":
        return (int(d["left"]), int(d["right"]))
    return str(d["mode"])


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
    """One word with its start and end in seconds and its confidence (the minimum over its tokens).
    ``speaker``: with a diarizer, the speaker who said it (0-based, -1: none near it), else None.
    ``name`` / ``name_score``: with a voice registry, the speaker's registered name ("" when none
    was accepted) and its cosine score, else None."""

    text: str
    start: float
    end: float
    confidence: float
    speaker: Optional[int] = None
    name: Optional[str] = None
    name_score: Optional[float] = None

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"text": self.text, "start": self.start, "end": self.end, "confidence": self.confidence}
        if self.speaker is not None:
            d["speaker"] = self.speaker
        return {**d, **name_fields(self)}


@dataclass(frozen=True, order=True)
class Segment:
    """One speaker's turn: speakers are numbered from 0 in order of arrival; seconds."""

    speaker: int
    start: float
    end: float


@dataclass(frozen=True)
class Utterance:
    """A run of one speaker's words with pauses of at most 0.5 s: their text joined by spaces,
    the first start and last end (seconds, 10 ms), the minimum confidence; ``name`` /
    ``name_score`` as for :class:`Word`."""

    speaker: int
    text: str
    start: float
    end: float
    confidence: float
    name: Optional[str] = None
    name_score: Optional[float] = None

    def to_dict(self) -> Dict[str, Any]:
        return {"speaker": self.speaker, "text": self.text, "start": self.start, "end": self.end,
                "confidence": self.confidence, **name_fields(self)}


def name_fields(item: Union[Word, Utterance]) -> Dict[str, Any]:
    """``{"name", "name_score"}`` of a named word or utterance; {} without a voice registry."""
    return {} if item.name is None else {"name": item.name, "name_score": item.name_score}


def _named(item: Dict[str, Any]) -> Dict[str, Any]:
    """The name keyword arguments of a library word or utterance (none in the unnamed document)."""
    return {"name": str(item["name"]), "name_score": float(item["name_score"])} if "name" in item else {}


def tokens_from_json(items: List[Dict[str, Any]], frame_sec: float) -> List[Token]:
    """The library's ``[{"id", "t", "conf", "dur"}]`` (``dur`` in encoder frames) → tokens."""
    return [
        Token(id=int(t["id"]), start=float(t["t"]), duration=round(float(t["dur"]) * frame_sec, 6),
              confidence=float(t["conf"]))
        for t in items
    ]


def words_from_json(items: List[Dict[str, Any]]) -> List[Word]:
    """The library's ``[{"w", "start", "end", "conf"}]`` → words."""
    return [Word(text=str(w["w"]), start=float(w["start"]), end=float(w["end"]), confidence=float(w["conf"]))
            for w in items]


@dataclass(frozen=True)
class Transcript:
    """The result of one transcription.

    ``duration`` is the length of the audio in seconds and ``frame_sec`` the time one encoder
    frame covers. ``tokens`` and ``words`` are empty when timestamps were not requested.
    ``attention`` is the attention that ran: "full" or ``(left, right)`` for local (``None``
    when the library was not asked for it: ``timestamps=False`` without ``progress``).
    With a diarizer, each word has its ``speaker``, ``segments`` holds the diarization's
    speaker segments and ``utterances`` the runs of one speaker's words (both empty otherwise).
    """

    text: str
    tokens: List[Token] = field(default_factory=list)
    words: List[Word] = field(default_factory=list)
    duration: float = 0.0
    frame_sec: float = 0.0
    attention: Optional[Attention] = None
    segments: List[Segment] = field(default_factory=list)
    utterances: List[Utterance] = field(default_factory=list)
    #: A VAD-cut transcription's speech segments [{"start", "end"}] (seconds): the audio that
    #: was transcribed; None for any other transcription.
    speech_segments: Optional[List[Dict[str, float]]] = None

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready dict: ``{"text", "duration", "frame_sec", "attention", "words": [...],
        "tokens": [...]}`` (``attention``: "full", ``[left, right]`` or ``None``), with a
        diarizer ``"segments"`` and ``"utterances"`` too, and ``"speech_segments"`` for a
        VAD-cut transcription."""
        d: Dict[str, Any] = {
            "text": self.text,
            "duration": self.duration,
            "frame_sec": self.frame_sec,
            "attention": list(self.attention) if isinstance(self.attention, tuple) else self.attention,
            "words": [w.to_dict() for w in self.words],
            "tokens": [t.to_dict() for t in self.tokens],
        }
        if self.segments or self.utterances:
            d["segments"] = [{"speaker": g.speaker, "start": g.start, "end": g.end} for g in self.segments]
            d["utterances"] = [u.to_dict() for u in self.utterances]
        if self.speech_segments is not None:
            d["speech_segments"] = [dict(s) for s in self.speech_segments]
        return d

    @classmethod
    def from_json(cls, document: str) -> "Transcript":
        """Parse the library's transcript JSON (see the module docstring)."""
        try:
            d = json.loads(document)
        except ValueError as e:
            raise InternalError(f"the library returned a transcript this binding cannot read: {e}") from e
        return cls.from_document(d)

    @classmethod
    def from_document(cls, d: Dict[str, Any]) -> "Transcript":
        """The transcript of one parsed document (an element of a batch call's array, say)."""
        try:
            frame_sec = float(d["frame_sec"])
            return cls(text=str(d["text"]), tokens=tokens_from_json(d["tokens"], frame_sec),
                       words=words_from_json(d["words"]), duration=float(d["duration"]),
                       frame_sec=frame_sec, attention=attention_from_json(d["attention"]),
                       # the VAD-cut document's "segments" are the speech transcribed
                       speech_segments=[{"start": float(x["start"]), "end": float(x["end"])}
                                        for x in d["segments"]] if "segments" in d else None)
        except (ValueError, KeyError, TypeError) as e:
            raise InternalError(f"the library returned a transcript this binding cannot read: {e}") from e

    @classmethod
    def text_only(cls, text: str, n_samples: int, sample_rate: int, frame_sec: float) -> "Transcript":
        """A ``timestamps=False`` result: the text and the audio's duration (to the millisecond)."""
        return cls(text=text, duration=round(n_samples / sample_rate, 3), frame_sec=frame_sec)

    @classmethod
    def from_sas_json(cls, document: str) -> "Transcript":
        """Parse the library's speaker-attributed document (see the module docstring)."""
        try:
            d = json.loads(document)
            t = cls.from_document(d["transcript"])
            if len(d["words"]) != len(t.words):
                raise ValueError("one speaker per word expected")
            return cls(text=t.text, tokens=t.tokens, duration=t.duration, frame_sec=t.frame_sec,
                       attention=t.attention,
                       words=[Word(w.text, w.start, w.end, w.confidence, int(s["speaker"]), **_named(s))
                              for w, s in zip(t.words, d["words"])],
                       segments=[Segment(int(g["speaker"]), float(g["start"]), float(g["end"]))
                                 for g in d["segments"]],
                       utterances=[Utterance(int(u["speaker"]), str(u["text"]), float(u["start"]), float(u["end"]),
                                             float(u["conf"]), **_named(u)) for u in d["utterances"]])
        except (ValueError, KeyError, TypeError) as e:
            raise InternalError(f"the library returned a transcript this binding cannot read: {e}") from e
