"""The FFmpeg decoder (through PyAV, whose wheels bundle FFmpeg's libraries): AAC, Opus and MP3
in MP4/M4A/MOV, Opus and Vorbis in WebM/Matroska, MPEG audio in MPEG program streams, AMR.

The demuxer is the one :mod:`formats` sniffed, named to FFmpeg, so no other demuxer ever
sees the file; only the first audio stream is decoded (video packets are read and dropped,
never decoded). A decoding error (a corrupt packet) ends the file with an error rather than
being skipped, so damage never passes as a shorter recording.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import av
import numpy as np

from ..errors import InvalidAudio
from .formats import Container
from .samples import BLOCK_FRAMES, as_float

# What PyAV raises for input FFmpeg rejects (its FFmpegError subclasses are also ValueError,
# OSError or EOFError subclasses, by their error code).
_FAILURES = (av.error.FFmpegError, ValueError, OSError, EOFError)

# FFmpeg's demuxer options: a file with more streams than this is refused (the default, 1000,
# lets a tiny file make the demuxer allocate a thousand stream contexts).
_OPEN_OPTIONS = {"max_streams": "16"}


class AvDecoder:
    """One open file: its rate, channels and stated length, then its blocks."""

    #: Whether a shortfall against stated_frames means truncation (set by open_decoder, which
    #: knows the container).
    trust_length = False

    def __init__(self, source: Any, name: str, container: Container, strict: bool) -> None:
        self.name = name
        try:
            self._c = av.open(source, mode="r", format=container.demuxer, options=_OPEN_OPTIONS,
                              metadata_errors="ignore")
        except _FAILURES as e:
            raise InvalidAudio(f"{name}: cannot decode audio: not a valid {container.label} file ({e})") from e
        try:
            self._open_stream(container, strict)
        except BaseException:
            self._c.close()
            raise

    def _open_stream(self, container: Container, strict: bool) -> None:
        streams = self._c.streams.audio
        if not streams:
            raise InvalidAudio(f"{self.name}: the {container.label} file has no audio stream")
        self._stream = streams[0]
        codec = self._stream.codec_context
        if strict and codec.name not in container.codecs:
            raise InvalidAudio(f"{self.name}: {codec.name} audio is not accepted here (accepted in "
                               f"{container.label}: {', '.join(sorted(container.codecs))})")
        self.rate = int(codec.sample_rate or 0)
        self.channels = int(codec.channels or 0)
        if self.rate <= 0 or self.channels <= 0:
            raise InvalidAudio(f"{self.name}: cannot decode audio: the {codec.name} stream states no sample rate "
                               "or channel count")
        self.stated_frames = self._stated_frames()

    def _stated_frames(self) -> Optional[int]:
        """The length the container states (the track's, else the file's), in frames."""
        s = self._stream
        if s.duration is not None and s.time_base is not None and s.duration > 0:
            return int(s.duration * s.time_base * self.rate)
        if self._c.duration is not None and self._c.duration > 0:
            return int(self._c.duration * self.rate // av.time_base)
        return None

    def blocks(self) -> Iterator[np.ndarray]:
        """The frames as [n, channels] float32 blocks, gathered from the codec's small frames
        into one reused buffer."""
        buffer = np.empty((BLOCK_FRAMES, self.channels), dtype=np.float32)
        filled = 0
        decoded = 0
        for frame in self._frames():
            if frame.sample_rate != self.rate or len(frame.layout.channels) != self.channels:
                raise InvalidAudio(f"{self.name}: cannot decode audio: the stream changes from {self.rate} Hz, "
                                   f"{self.channels} channels to {frame.sample_rate} Hz, "
                                   f"{len(frame.layout.channels)} channels at {decoded / self.rate:.2f} s")
            samples = frame.to_ndarray()
            # Planar formats come as [channels, n], packed ones as [1, n * channels].
            samples = samples.T if frame.format.is_planar else samples.reshape(-1, self.channels)
            samples = as_float(samples)
            decoded += len(samples)
            while len(samples):
                take = min(len(samples), BLOCK_FRAMES - filled)
                buffer[filled:filled + take] = samples[:take]
                filled += take
                samples = samples[take:]
                if filled == BLOCK_FRAMES:
                    yield buffer
                    filled = 0
        if filled:
            yield buffer[:filled]

    def _frames(self) -> Iterator[Any]:
        """The audio stream's decoded frames (the decoder is flushed by the demuxer's last, empty
        packet)."""
        packets = self._c.demux(self._stream)
        packet = None
        while True:
            try:
                packet = next(packets, None)
                if packet is None:
                    return
                frames = packet.decode()
            except _FAILURES as e:
                at = float(packet.pts * packet.time_base) if packet is not None and packet.pts is not None else None
                where = f" at {at:.2f} s" if at is not None else ""
                raise InvalidAudio(f"{self.name}: cannot decode audio: corrupt data{where} ({e})") from e
            yield from frames

    def close(self) -> None:
        self._c.close()
