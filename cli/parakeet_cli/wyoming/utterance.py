"""One utterance of one client: its audio, its live stream and its final text.

The live text comes from a library stream (:meth:`parakeet_py.Context.stream`) fed as the audio
arrives: the words it makes final are the ``transcript-chunk``s. The ``transcript`` comes from
one offline transcription of the whole utterance at ``audio-stop``, so it is exactly the text
``parakeet-cli transcribe`` gives for the same audio saved as a WAV file (a stream sees each
chunk with limited context and may differ from it). The stream is never finalized: its last
chunk would only repeat what the offline pass computes.

Every method that calls the library (:meth:`begin`, :meth:`feed`, :meth:`transcribe`,
:meth:`close`) blocks; the handler runs them on the service's threads, one at a time.

A stream in the service's stream group (service.py) is fed one chunk at a time: a batch runs
every chunk its members have ready before any of them returns, so a feed of many chunks would
hold the other clients' feeds back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import numpy as np

from parakeet_py import StreamGroup

from ..stream_batching import chunk_samples, is_cache_aware
from .pcm import PcmFormat

LOG = logging.getLogger("parakeet.wyoming")

# Audio handed to the stream at a time: each feed is a trip to a worker thread, and the stream
# only decodes whole chunks (2 s by default) anyway.
FEED_SECONDS = 0.5


class TooLong(ValueError):
    """The utterance passed the service's length limit."""


@dataclass(frozen=True)
class Settings:
    """How every utterance of the service is transcribed (the command's options)."""

    decoder: Optional[str]
    beam: Optional[int]
    #: (left, chunk, right) seconds of the live stream of an offline model; None: no live text.
    window: Optional[Tuple[float, float, float]]
    max_seconds: float
    #: a cache-aware model's attention context for the live stream (None: the model's first).
    att_context: Optional[Tuple[int, int]] = None


class Utterance:
    def __init__(self, context: Any, fmt: PcmFormat, language: Optional[str], settings: Settings,
                 group: Optional[StreamGroup] = None) -> None:
        self.format = fmt
        self.language = language
        self._context = context
        self._settings = settings
        self._group = group  # the stream group the live stream joins (None: it runs alone)
        self._piece = 0  # samples per feed call of a stream in the group (0: all it has at once)
        self._pieces: List[np.ndarray] = []  # mono float32 at the client's rate
        self._samples = 0
        self._unfed = 0  # samples at the end of _pieces not yet fed to the stream
        self._stream: Optional[Any] = None
        #: The live text sent so far (the stream's final words).
        self.live_text = ""

    @property
    def seconds(self) -> float:
        return self._samples / self.format.rate

    def begin(self) -> None:
        """Opens the live stream (when the settings have a window), in the group if there is one."""
        window = self._settings.window
        if window is None:
            return
        left, chunk, right = window
        if is_cache_aware(self._context):
            # a cache-aware model streams in its attention context's chunks, not in windows
            self._stream = self._context.stream(att_context=self._settings.att_context, sample_rate=self.format.rate,
                                                decoder=self._settings.decoder, language=self.language)
        else:
            self._stream = self._context.stream(chunk, left, right, sample_rate=self.format.rate,
                                                decoder=self._settings.decoder, language=self.language)
        if self._group is not None:
            self._group.join(self._stream)  # it leaves when it is closed
            self._piece = chunk_samples(self._context, self._stream.settings, self.format.rate)

    def add(self, samples: np.ndarray) -> bool:
        """Keeps ``samples`` (raising :class:`TooLong` past the limit); True when enough audio
        waits for the stream that :meth:`feed` should run."""
        if (self._samples + samples.size) / self.format.rate > self._settings.max_seconds:
            raise TooLong(f"an utterance may hold at most {self._settings.max_seconds:g} s of audio; "
                          "it is dropped")
        self._pieces.append(samples)
        self._samples += samples.size
        self._unfed += samples.size
        return self._stream is not None and self._unfed >= FEED_SECONDS * self.format.rate

    def feed(self) -> str:
        """Feeds the stream the audio it has not had; returns the text that became final."""
        if self._stream is None or not self._unfed:
            return ""
        unfed = np.concatenate(self._tail(self._unfed))
        self._unfed = 0
        step = self._piece or unfed.size
        text = "".join(self._stream.feed(unfed[begin:begin + step]).text for begin in range(0, unfed.size, step))
        if not self.live_text:
            text = text.lstrip()
        self.live_text += text
        return text

    def transcribe(self) -> str:
        """The whole utterance's text, transcribed offline (see the module's note)."""
        audio = np.concatenate(self._pieces) if self._pieces else np.zeros(0, dtype=np.float32)
        return self._context.transcribe(audio, sample_rate=self.format.rate, decoder=self._settings.decoder,
                                        beam=self._settings.beam, language=self.language, timestamps=False).text

    def rest_of(self, text: str) -> str:
        """What ``text`` adds to the live text, when the live text begins it ("" otherwise: a
        stream that heard the words differently is left as it was)."""
        return text[len(self.live_text):] if text.startswith(self.live_text) else ""

    def close(self) -> None:
        """Frees the stream and the audio."""
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()
            if self._group is not None:
                LOG.debug("a live stream left the stream group (members: %d)", len(self._group))
        self._pieces, self._samples, self._unfed = [], 0, 0

    def _tail(self, n: int) -> List[np.ndarray]:
        """The last ``n`` samples of the utterance, as pieces."""
        tail: List[np.ndarray] = []
        for piece in reversed(self._pieces):
            if n <= 0:
                break
            tail.append(piece[-n:] if piece.size > n else piece)
            n -= piece.size
        return tail[::-1]
