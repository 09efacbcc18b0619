"""Beam search results: :class:`Hypothesis` and the calls behind ``Context.transcribe(beam=N)``
and ``Context.transcribe_nbest``.

The library runs NeMo's transducer beam search (strategy ``beam``; TDT and RNN-T heads) and
returns parakeet.cpp's N-best document (``parakeet_capi_transcribe_pcm_nbest_json``, see
docs/api.md) whose hypotheses also carry our transcript keys (token ``conf``/``dur``,
``words``), so each becomes a whole :class:`Transcript`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from . import _native
from .errors import InternalError, InvalidArgument
from .transcript import Transcript, attention_from_json, tokens_from_json, words_from_json


@dataclass(frozen=True)
class Hypothesis:
    """One hypothesis of an N-best list: its transcript, ``score`` (the sum of its
    log-probabilities) and ``normalized_score`` (score / (tokens + 1), what ``score_norm``
    ranks by)."""

    transcript: Transcript
    score: float
    normalized_score: float

    def to_dict(self) -> Dict[str, Any]:
        return {"score": self.score, "normalized_score": self.normalized_score, **self.transcript.to_dict()}


def check_beam(beam: Any, nbest: Any = 1) -> None:
    for name, v in (("beam", beam), ("nbest", nbest)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise InvalidArgument(f"{name} must be a positive int, not {v!r}")
    if nbest > beam:
        raise InvalidArgument(f"nbest ({nbest}) must not exceed beam ({beam})")


def hypotheses_from_json(document: str) -> List[Hypothesis]:
    """The library's N-best document → hypotheses, best first."""
    try:
        d = json.loads(document)
        frame_sec = float(d["frame_sec"])
        attention = attention_from_json(d["attention"])
        return [
            Hypothesis(
                transcript=Transcript(text=str(h["text"]), tokens=tokens_from_json(h["tokens"], frame_sec),
                                      words=words_from_json(h["words"]), duration=float(d["duration"]),
                                      frame_sec=frame_sec, attention=attention),
                score=float(h["score"]), normalized_score=float(h["normalized_score"]))
            for h in d["hypotheses"]
        ]
    except (ValueError, KeyError, TypeError) as e:
        raise InternalError(f"the library returned an N-best document this binding cannot read: {e}") from e


def transcribe_nbest(ptr: Any, buf: Any, n: int, rate: int, beam: int, nbest: int, score_norm: bool,
                     language: Optional[str] = None) -> List[Hypothesis]:
    """One ``parakeet_capi_transcribe_pcm_nbest_json`` call on a context's pointer."""
    ffi, lib = _native.load()
    return hypotheses_from_json(_native.string_result(lib.parakeet_capi_transcribe_pcm_nbest_json(
        ptr, buf, n, rate, beam, nbest, 1 if score_norm else 0, _native.c_string(language))))
