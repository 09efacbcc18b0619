"""Turn detection of a realtime session: the Silero VAD run live over the session's audio.

A session's audio is one timeline (samples at the session's rate since the detector began).
:class:`SpeechTurns` resamples each append to the VAD's 16 kHz (a soxr stream, so the cut
between appends changes nothing), feeds a VAD stream (speech mode, no padding: the events are
the raw speech starts and ends) and keeps the last seconds of audio, so a turn that starts can
take its ``prefix_padding_ms`` of audio from before the VAD's start, which the VAD reports
``min_speech`` (250 ms) or more after it.

A start event is final when it comes; an end comes once ``silence_duration_ms`` of silence
(the VAD's ``min_pause``) has followed the speech, so the turn is committed right then, as
OpenAI's server VAD does.
"""

from __future__ import annotations

import time
from typing import Any, List, Tuple

import numpy as np

from parakeet_py import Vad

from .vad_settings import ServerVad

VAD_RATE = 16000
# Audio kept beyond the prefix padding for a start the VAD reports late (it needs min_speech
# of speech first; a turn whose start comes later than this begins where the kept audio does).
KEEP_MARGIN_SECONDS = 10.0


class SpeechTurns:
    """Speech starts and ends of one session's audio (not thread-safe: one feed at a time)."""

    def __init__(self, vad: Vad, rate: int, settings: ServerVad, max_turn_seconds: float) -> None:
        import soxr

        self.rate, self.settings = rate, settings
        # An item is fed only audio the VAD has judged (``heard``), so a turn's end, which the
        # VAD reports a frame after its silence, never lies behind what its item holds.
        # The VAD cuts a longer turn at its longest pause (or hard), so no turn passes the
        # server's item limit with its padding and silence.
        tail = (settings.prefix_padding_ms + settings.silence_duration_ms) / 1000
        max_segment = min(86400.0, max(1.0, max_turn_seconds - tail))
        self._stream = vad.stream(VAD_RATE, threshold=settings.threshold, min_pause=settings.silence_duration_ms / 1000,
                                  speech_pad=0.0, max_segment=max_segment)
        self._resampler = None if rate == VAD_RATE else soxr.ResampleStream(rate, VAD_RATE, 1, dtype="float32",
                                                                             quality="HQ")
        self._keep = int((settings.prefix_padding_ms / 1000 + KEEP_MARGIN_SECONDS) * rate)
        self._audio = np.zeros(0, np.int16)
        self.audio_start = 0  # timeline position of self._audio[0]
        self.end = 0  # samples on the timeline so far
        self.vad_seconds = 0.0  # audio the VAD has run on (for the metrics)
        # Seconds the resampler and the VAD ran, timed on the thread that runs them (for the
        # metrics: a feed's wait for that thread, or for the event loop after it, is not compute).
        self.compute_seconds = 0.0
        self.heard = 0  # timeline samples the VAD has judged (whole 32 ms frames)
        self._frames = 0

    def feed(self, samples: np.ndarray) -> List[Tuple[str, int]]:
        """Appends PCM16 ``samples``; returns the speech events now final, [("start"|"end",
        timeline sample)], in order. Runs the VAD: call it on a stream thread."""
        self._audio = np.concatenate([self._audio, samples])
        self.end += samples.size
        started = time.perf_counter()
        pcm = samples.astype(np.float32) / 32768.0
        if self._resampler is not None:
            pcm = self._resampler.resample_chunk(pcm)
        self.vad_seconds += pcm.size / VAD_RATE
        result = self._stream.feed(pcm)
        self.compute_seconds += time.perf_counter() - started
        self._frames += len(result["probabilities"])
        self.heard = min(self.end, int(round(self._frames * result["frame_sec"] * self.rate)))
        events = result["events"]
        return [(e["type"], min(self.end, int(round(e["time"] * self.rate)))) for e in events]

    def audio(self, first: int, last: int) -> np.ndarray:
        """The timeline's samples [first, last) still kept."""
        first = max(first, self.audio_start)
        return self._audio[first - self.audio_start:max(first, last) - self.audio_start]

    def turn_start(self, speech_start: int, not_before: int) -> int:
        """Where a turn whose speech starts at ``speech_start`` begins: its prefix padding
        before that, within the audio kept and not before ``not_before`` (the last turn's end)."""
        prefix = self.settings.prefix_padding_ms * self.rate // 1000
        return max(speech_start - prefix, self.audio_start, not_before, 0)

    def turn_end(self, speech_end: int) -> int:
        """Where a turn whose speech ends at ``speech_end`` ends: its silence included."""
        return min(self.end, speech_end + self.settings.silence_duration_ms * self.rate // 1000)

    def forget(self) -> None:
        """Drops audio no later turn can need."""
        drop = self._audio.size - self._keep
        if drop > 0:
            self._audio = self._audio[drop:]
            self.audio_start += drop

    def close(self) -> None:
        self._stream.close()


def ms(samples: int, rate: int) -> int:
    return int(round(samples * 1000 / rate))


__all__: List[Any] = ["SpeechTurns", "ms", "VAD_RATE"]
