"""A Wyoming client's raw PCM → float32 mono samples at the client's own rate.

Conversion is the library's (``parakeet_py.load_audio`` on the frames): integers scaled to
[-1, 1] (8-bit as WAV stores it: unsigned, centred), channels averaged. The one resampling to
the model's rate happens later, on the whole utterance (and in the live stream), with the
library's resampler: so an utterance gives exactly the samples its WAV file would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict

import numpy as np

from parakeet_py import load_audio

# Sample widths in bytes → how each is read: 1 as WAV's unsigned 8-bit, 3 widened to int32.
WIDTHS = {1: "u1", 2: "<i2", 3: "<i4", 4: "<i4"}
# A client declares one of these; more channels than this is a mistake, not a microphone.
MAX_CHANNELS = 32
MAX_RATE = 384_000


class BadAudio(ValueError):
    """A format or payload the service cannot take (its message is sent to the client)."""


@dataclass(frozen=True)
class PcmFormat:
    rate: int
    width: int
    channels: int

    @classmethod
    def from_data(cls, data: Dict[str, Any], event: str) -> "PcmFormat":
        """The format an audio-start or audio-chunk declares (``rate``, ``width``, ``channels``)."""
        values = {}
        for name in ("rate", "width", "channels"):
            value = data.get(name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise BadAudio(f"{event}: '{name}' must be a whole number, not {value!r}")
            values[name] = value
        if not 1 <= values["rate"] <= MAX_RATE:
            raise BadAudio(f"{event}: rate {values['rate']} Hz is outside 1..{MAX_RATE}")
        if values["width"] not in WIDTHS:
            raise BadAudio(f"{event}: width {values['width']} is not 1, 2, 3 or 4 bytes")
        if not 1 <= values["channels"] <= MAX_CHANNELS:
            raise BadAudio(f"{event}: {values['channels']} channels is outside 1..{MAX_CHANNELS}")
        return cls(**values)

    def __str__(self) -> str:
        return f"{self.rate} Hz, {self.width * 8}-bit, {self.channels} channel(s)"

    def samples(self, payload: bytes) -> np.ndarray:
        """The payload's frames as float32 mono at :attr:`rate`."""
        frame = self.width * self.channels
        if len(payload) % frame:
            raise BadAudio(f"audio-chunk: {len(payload)} bytes is not a whole number of {frame}-byte frames")
        if self.width == 3:  # 24-bit: each sample into the top three bytes of an int32 (scale 2^31)
            wide = np.zeros((len(payload) // 3, 4), dtype=np.uint8)
            wide[:, 1:] = np.frombuffer(payload, dtype=np.uint8).reshape(-1, 3)
            ints = wide.view("<i4").reshape(-1)
        else:
            ints = np.frombuffer(payload, dtype=WIDTHS[self.width])
        frames = ints.reshape(-1, self.channels)
        return load_audio(frames, sample_rate=self.rate, target_rate=self.rate)
