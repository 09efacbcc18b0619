"""Speakers on the turns of a ``/v1/realtime`` session (docs/server.md, "Speakers on realtime
turns").

A session that asks for them (``transcription.speakers: true``) gets one stream of segments for
all its audio: every sample it appends, on the session's own timeline (session_audio.py), so
speaker 0 of the first turn is speaker 0 of the fifth. The stream is a diarization stream
(``Diarizer.stream``), or, on a server with ``--voices``, a scene stream of the diarizer, the
speaker encoder and the registry (``parakeet_py.speakers.scene_stream``), whose slots the
library names while the audio arrives by its live rules (minimum voice, refresh, maximum voice,
a new name wins twice). When an item ends, its words (moved from the item's timeline onto the
session's) take their speakers, and their utterances their texts, by the library's rules
(``parakeet_py.speakers.diarize.attribute_words``) from the segments the stream knows then: the
closed ones, then the open ones (ending at the time a diarization stream has diarized; a scene
stream does not report that time, so its open segments end at the audio it has heard), and
with --voices each takes its slot's name at that moment ("" while the slot has none). The
stream lags the audio by its latency, so the last words of a turn may lie beyond what it has
diarized; they take the nearest segment within 0.5 s, or -1.

Its methods do blocking work (resampling, the library): the session calls them on a stream
thread, the feeds in backend turns, one at a time.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Optional

import numpy as np

from parakeet_py import Segment, Word
from parakeet_py.speakers import scene_stream
from parakeet_py.speakers.diarize import attribute_words

from .formats import speaker_name
from .session_audio import MODEL_RATE, SessionAudio

# A closed segment that ends this long before the start of the next item cannot reach its
# words (the nearest-segment rule looks 0.5 s away): it is let go.
KEEP_SECONDS = 1.0
# Audio a scene stream is fed in one backend turn (its diarizer runs a chunk when one is in).
SCENE_PIECE_SECONDS = 1.0


class DiarizedSegments:
    """The segments of a diarization stream; no names."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.piece_samples = int(stream.chunk_samples)  # a feed's audio beyond this waits for a turn of its own

    def feed(self, pcm: np.ndarray) -> List[Segment]:
        """Feeds 16 kHz audio; the segments that closed."""
        return self._stream.feed(pcm)

    def open(self) -> List[Segment]:
        return self._stream.active

    def names(self) -> Optional[Dict[int, str]]:
        return None

    def close(self) -> None:
        self._stream.close()


class NamedSegments:
    """The segments and slot names of a scene stream (a diarizer, a speaker encoder, a registry)."""

    piece_samples = int(SCENE_PIECE_SECONDS * MODEL_RATE)

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._open: List[Segment] = []
        self._names: Dict[int, str] = {}

    def feed(self, pcm: np.ndarray) -> List[Segment]:
        doc = self._stream.feed(pcm)
        self._open = [Segment(s["speaker"], s["start"], doc["t"]) for s in doc["active"]["speakers"]]
        self._names = {int(slot): n["name"] for slot, n in doc["names"].items()}
        return [Segment(s["speaker"], s["start"], s["end"]) for s in doc["speakers"]]

    def open(self) -> List[Segment]:
        return self._open

    def names(self) -> Optional[Dict[int, str]]:
        return self._names

    def close(self) -> None:
        self._stream.close()


def open_segments(diarizer: Any, latency: str, voices: Optional[Any]) -> Any:
    """A session's stream of segments at the diarizer's ``latency`` preset: named with the
    server's voices (voices.Voices) when they hold a registry. Raises ParakeetError (a diarizer
    that cannot stream)."""
    if voices is None or voices.registry is None:
        return DiarizedSegments(diarizer.stream(latency))
    return NamedSegments(scene_stream.begin(diarizer=diarizer, speaker_encoder=voices.encoder,
                                            registry=voices.registry, latency=latency, **voices.live_naming))


class SessionSpeakers(SessionAudio):
    """One session's stream of segments (DiarizedSegments or NamedSegments) and those it has closed."""

    def __init__(self, segments: Any, rate: int) -> None:
        super().__init__(rate)
        self._segments = segments
        self.chunk_samples = segments.piece_samples
        self._closed: List[Segment] = []

    def diarize(self, pcm: np.ndarray) -> None:
        """Feeds the stream (16 kHz float); keeps the segments that closed."""
        self._closed += self._segments.feed(pcm)

    def attribute(self, words: List[Word], item_start: float) -> Dict[str, Any]:
        """The completed event's extra keys for an item's ``words`` (times from the item's start,
        which is ``item_start`` on the timeline): its words with their speakers (and names) and
        its utterances as OpenAI's diarized_json segments, times in seconds on the timeline."""
        words = [replace(w, start=round(item_start + w.start, 3), end=round(item_start + w.end, 3)) for w in words]
        speakers, utterances = attribute_words(words, self._closed + self._segments.open())
        names = self._segments.names()

        def who(speaker: int) -> Dict[str, str]:
            label = {"speaker": speaker_name(speaker)}
            return label if names is None else {**label, "name": names.get(speaker, "")}

        out_words = [{"word": w.text, "start": w.start, "end": w.end, **who(s)} for w, s in zip(words, speakers)]
        out_segments = [{"type": "transcript.text.segment", "id": f"seg_{i}", "start": round(u.start, 3),
                         "end": round(u.end, 3), "text": u.text, **who(u.speaker)}
                        for i, u in enumerate(utterances)]
        return {"words": out_words, "segments": out_segments}

    def forget(self, before: float) -> None:
        """Lets go of the closed segments no word at or after ``before`` (seconds) can take."""
        self._closed = [s for s in self._closed if s.end >= before - KEEP_SECONDS]

    def close(self) -> None:
        self._segments.close()
