"""A realtime session's timeline for a 16 kHz model beside its items' streams (the diarizer of
its speakers, the tagger of its sounds): the PCM16 the session appends, at whatever rate it
has now, brought to 16 kHz by one soxr stream per rate, so the cut between appends changes
nothing, and counted in seconds since the model began to hear it (a new rate keeps the count).
"""

from __future__ import annotations

import numpy as np

MODEL_RATE = 16000


class SessionAudio:
    """The audio appended to one model of a session, and the seconds it spans."""

    def __init__(self, rate: int) -> None:
        self._rate = 0
        self._seconds_before = 0.0  # the timeline's seconds at earlier rates
        self._samples = 0  # samples appended at the current rate
        self._resampler = None
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
        self._resampler = None if rate == MODEL_RATE else soxr.ResampleStream(rate, MODEL_RATE, 1, dtype="float32",
                                                                              quality="HQ")

    def resample(self, samples: np.ndarray) -> np.ndarray:
        """PCM16 ``samples`` at the session's rate, appended to the timeline → the model's audio."""
        self._samples += samples.size
        pcm = samples.astype(np.float32) / 32768.0
        if self._resampler is not None:
            pcm = self._resampler.resample_chunk(pcm)
        pcm, self._pending = np.concatenate([self._pending, pcm]), np.zeros(0, np.float32)
        return pcm
