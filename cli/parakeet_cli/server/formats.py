"""The response formats of ``/v1/audio/transcriptions``: json, text, verbose_json, srt, vtt, and
diarized_json (OpenAI's ``TranscriptionDiarized``) on a server with a diarization model.

Parakeet gives a transcript with word and token timestamps but no segments, so verbose_json's
segments are built here from the words (see :func:`segments`); srt and vtt are the CLI's
subtitles (:mod:`parakeet_cli.subtitles`). Fields of OpenAI's verbose_json that this
engine has no honest value for are approximated or null; docs/server.md lists them.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from .. import subtitles

RESPONSE_FORMATS = ("json", "text", "verbose_json", "srt", "vtt", "diarized_json")
# The formats a server with a diarization model answers with speakers (the timestamped ones).
DIARIZED_FORMATS = ("verbose_json", "srt", "vtt", "diarized_json")
GRANULARITIES = ("word", "segment")

# Segmentation rules: a segment ends after a word that ends a sentence, before a pause of
# at least PAUSE_SEC, or once it would span more than MAX_SEGMENT_SEC.
SENTENCE_END = (".", "?", "!")
PAUSE_SEC = 1.0
MAX_SEGMENT_SEC = 10.0


@dataclass
class Segment:
    start: float
    end: float
    text: str
    token_ids: List[int]
    avg_logprob: Optional[float]


def _r(t: float) -> float:
    return round(float(t), 3)


def segments(transcript) -> List[Segment]:
    """Groups the words into segments and gives each the tokens that start inside it.

    A token belongs to the segment in whose [start, next segment's start) its start time
    falls: the library does not say which word a token belongs to, only when it starts.
    """
    words = list(transcript.words)
    if not words:
        if not transcript.text.strip():
            return []
        # Text without word times: one segment over the whole clip.
        groups = [(0.0, float(transcript.duration), transcript.text.strip())]
    else:
        groups = []
        first = 0
        for i, w in enumerate(words):
            last = i + 1 == len(words)
            ends = w.text.endswith(SENTENCE_END)
            pause = not last and words[i + 1].start - w.end >= PAUSE_SEC
            long = not last and words[i + 1].end - words[first].start > MAX_SEGMENT_SEC
            if last or ends or pause or long:
                chunk = words[first:i + 1]
                groups.append((chunk[0].start, max(x.end for x in chunk), " ".join(x.text for x in chunk)))
                first = i + 1

    tokens = sorted(transcript.tokens, key=lambda t: t.start)
    out: List[Segment] = []
    k = 0
    for n, (start, end, text) in enumerate(groups):
        limit = groups[n + 1][0] if n + 1 < len(groups) else math.inf
        mine = []
        while k < len(tokens) and (tokens[k].start < limit or n + 1 == len(groups)):
            mine.append(tokens[k])
            k += 1
        out.append(Segment(start=start, end=end, text=text, token_ids=[t.id for t in mine],
                           avg_logprob=_avg_logprob(mine)))
    return out


def _avg_logprob(tokens) -> Optional[float]:
    # The mean log of each emitted token's probability (its max_prob confidence, which for
    # greedy decoding is the probability of the chosen token). None without tokens.
    if not tokens:
        return None
    return round(sum(math.log(max(t.confidence, 1e-12)) for t in tokens) / len(tokens), 4)


def _compression_ratio(text: str) -> float:
    # Whisper's definition: UTF-8 length over zlib-compressed length.
    raw = text.encode("utf-8")
    return round(len(raw) / len(zlib.compress(raw)), 4) if raw else 0.0


def json_body(transcript) -> Dict[str, Any]:
    return {"text": transcript.text}


def text_body(transcript) -> str:
    return transcript.text + "\n"


def verbose_json_body(transcript, granularities: Sequence[str], language: Optional[str]) -> Dict[str, Any]:
    """OpenAI's verbose_json: segments unless only words were asked for, words if asked for."""
    body: Dict[str, Any] = {
        "task": "transcribe",
        # The model does not identify the language; this echoes the request's `language`.
        "language": language,
        "duration": _r(transcript.duration),
        "text": transcript.text,
    }
    if "word" in granularities:
        body["words"] = [{"word": w.text, "start": _r(w.start), "end": _r(w.end),
                          **({"speaker": speaker_name(w.speaker)} if w.speaker is not None else {})}
                         for w in transcript.words]
    if "segment" in granularities or not granularities:
        body["segments"] = [
            {
                "id": i,
                "seek": 0,  # the whole clip is one window
                "start": _r(s.start),
                "end": _r(s.end),
                "text": s.text,
                "tokens": s.token_ids,  # ids in the model's own vocabulary
                "temperature": 0.0,  # greedy decoding
                "avg_logprob": s.avg_logprob,
                "compression_ratio": _compression_ratio(s.text),
                "no_speech_prob": None,  # not estimated by this engine
            }
            for i, s in enumerate(segments(transcript))
        ]
    return body


def srt_body(transcript) -> str:
    # The same subtitle cues as `parakeet-cli transcribe --format srt` (readability rules in
    # parakeet_cli.subtitles), not the verbose_json segments.
    return subtitles.to_srt(transcript.words)


def vtt_body(transcript) -> str:
    return subtitles.to_vtt(transcript.words)


def speaker_name(speaker: int) -> str:
    """OpenAI's labels: "A", "B", ... for the library's speakers 0, 1, ... (Sortformer has at most
    a handful), "unknown" for a word no speaker segment is near (-1)."""
    return chr(ord("A") + speaker) if 0 <= speaker < 26 else "unknown"


def diarized_json_body(transcript) -> Dict[str, Any]:
    """OpenAI's diarized_json (``TranscriptionDiarized``): one segment per utterance (a run of one
    speaker's words), with its speaker's label, and the audio's duration as usage. A named
    transcript (--voices) also gives each segment its speaker's registered ``name`` ("" when the
    registry names none)."""
    return {
        "task": "transcribe",
        "duration": _r(transcript.duration),
        "text": transcript.text,
        "segments": [{"type": "transcript.text.segment", "id": f"seg_{i}", "start": _r(u.start), "end": _r(u.end),
                      "text": u.text, "speaker": speaker_name(u.speaker),
                      **({} if u.name is None else {"name": u.name})}
                     for i, u in enumerate(transcript.utterances)],
        "usage": {"type": "duration", "seconds": _r(transcript.duration)},
    }
