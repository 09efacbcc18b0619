"""Speakers on the turns of a ``/v1/realtime`` session (docs/server.md, "Speakers on realtime
turns").

A session that asks for them (``transcription.speakers: true``) gets one diarization stream
(``Diarizer.stream``) for all its audio: every sample it appends, on the session's own timeline
(resampled to the diarizer's 16 kHz by a soxr stream, so the cut between appends changes
nothing), so speaker 0 of the first turn is speaker 0 of the fifth. When an item ends, its
words (moved from the item's timeline onto the session's) take their speakers, and their
utterances their texts, by the library's rules (``parakeet_py.speakers.diarize.attribute_words``)
from the segments the stream knows then: the closed ones, then the open ones, which end at
the time it has diarized. The stream lags the audio by its latency, so the last words of a
turn may lie beyond what it has diarized; they take the nearest segment within 0.5 s, or -1.

Its methods do blocking work (resampling, the library): the session calls them on a stream
thread, the feeds in backend turns, one at a time.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List

import numpy as np

from parakeet_py import Segment, Word
from parakeet_py.speakers.diarize import attribute_words

from .formats import speaker_name

DIARIZER_RATE = 16000
# A closed segment that ends this long before the start of the next item cannot reach its
# words (the nearest-segment rule looks 0.5 s away): it is let go.
KEEP_SECONDS = 1.0


class SessionSpeakers:
    """One session's diarization stream and the segments it has closed."""

    def __init__(self, stream: Any, rate: int) -> None:
        self._stream = stream
        self.chunk_samples = int(stream.chunk_samples)  # a feed's audio beyond this waits for a turn of its own
        self._closed: List[Segment] = []
        self._rate = 0
        self._seconds_before = 0.0  # the timeline's seconds at earlier rates
        self._samples = 0  # samples appended at the current rate
        self._resampler: Any = None
        self._pending = np.zeros(0, np.float32)  # a replaced resampler's last output
        self.set_rate(rate)

    @property
    def seconds(self) -> float:
        """Seconds of audio appended so far: the session's timeline."""
        return self._seconds_before + self._samples / self._rate

    def seconds_at(self, samples_ahead: int) -> float:
        """The timeline's time ``samples_ahead`` samples (at the current rate, < 0: back) from now."""
        return self._seconds_before + (self._samples + samples_ahead) / self._rate

    def set_rate(self, rate: int) -> None:
        """Appends from now on come at ``rate``; the timeline goes on."""
        if rate == self._rate:
            return
        import soxr

        if self._resampler is not None:
            self._pending = np.concatenate([self._pending, self._resampler.resample_chunk(
                np.zeros(0, np.float32), last=True)])
        if self._rate:
            self._seconds_before, self._samples = self.seconds, 0
        self._rate = rate
        self._resampler = None if rate == DIARIZER_RATE else soxr.ResampleStream(rate, DIARIZER_RATE, 1,
                                                                                 dtype="float32", quality="HQ")

    def resample(self, samples: np.ndarray) -> np.ndarray:
        """PCM16 ``samples`` at the session's rate, appended to the timeline → the diarizer's audio."""
        self._samples += samples.size
        pcm = samples.astype(np.float32) / 32768.0
        if self._resampler is not None:
            pcm = self._resampler.resample_chunk(pcm)
        pcm, self._pending = np.concatenate([self._pending, pcm]), np.zeros(0, np.float32)
        return pcm

    def diarize(self, pcm: np.ndarray) -> None:
        """Feeds the diarizer (16 kHz float); keeps the segments that closed."""
        self._closed += self._stream.feed(pcm)

    def attribute(self, words: List[Word], item_start: float) -> Dict[str, Any]:
        """The completed event's extra keys for an item's ``words`` (times from the item's start,
        which is ``item_start`` on the timeline): its words with their speakers and its
        utterances as OpenAI's diarized_json segments, times in seconds on the timeline."""
        words = [replace(w, start=round(item_start + w.start, 3), end=round(item_start + w.end, 3)) for w in words]
        segments = self._closed + self._stream.active
        speakers, utterances = attribute_words(words, segments)
        out_words = [{"word": w.text, "start": w.start, "end": w.end, "speaker": speaker_name(s)}
                     for w, s in zip(words, speakers)]
        out_segments = [{"type": "transcript.text.segment", "id": f"seg_{i}", "start": round(u.start, 3),
                         "end": round(u.end, 3), "text": u.text, "speaker": speaker_name(u.speaker)}
                        for i, u in enumerate(utterances)]
        return {"words": out_words, "segments": out_segments}

    def forget(self, before: float) -> None:
        """Lets go of the closed segments no word at or after ``before`` (seconds) can take."""
        self._closed = [s for s in self._closed if s.end >= before - KEEP_SECONDS]

    def close(self) -> None:
        self._stream.close()
