"""The libsndfile decoder (through ``soundfile``): WAV, FLAC, Ogg Vorbis/Opus, MP3 and, outside
an allowlist, every other format the installed libsndfile reads (AIFF, AU, CAF, W64, ...)."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional

import numpy as np
import soundfile

from .audio_formats import Container
from .audio_samples import BLOCK_FRAMES
from .errors import InvalidAudio

# libsndfile's "length unknown" (SF_COUNT_MAX).
_UNKNOWN_FRAMES = (1 << 63) - 1


@contextlib.contextmanager
def decode_errors(name: str) -> Iterator[None]:
    """Turn what soundfile raises for a bad file into an InvalidAudio naming the input."""
    try:
        yield
    except soundfile.LibsndfileError as e:
        raise InvalidAudio(f"{name}: cannot decode audio: {e.error_string}") from e
    except (RuntimeError, OSError, ValueError, TypeError, EOFError) as e:
        raise InvalidAudio(f"{name}: cannot decode audio: {e}") from e


class SndfileDecoder:
    """One open file: its rate, channels and stated length, then its blocks."""

    #: Whether a shortfall against stated_frames means truncation (set by open_decoder, which
    #: knows the container).
    trust_length = False

    def __init__(self, source: Any, name: str, container: Optional[Container], strict: bool) -> None:
        self.name = name
        with decode_errors(name):
            self._f = soundfile.SoundFile(source)
        if strict and container is not None and self._f.subtype not in container.codecs:
            self._f.close()
            raise InvalidAudio(f"{name}: {self._f.format} audio encoded as {self._f.subtype} is not accepted "
                               f"here (accepted in {container.label}: {', '.join(sorted(container.codecs))})")
        self.rate = int(self._f.samplerate)
        self.channels = int(self._f.channels)
        frames = int(self._f.frames)
        self.stated_frames = frames if 0 < frames < _UNKNOWN_FRAMES else None

    def blocks(self) -> Iterator[np.ndarray]:
        """The frames as [n, channels] float32 blocks, all read into one reused buffer."""
        buffer = np.empty((BLOCK_FRAMES, self.channels), dtype=np.float32)
        while True:
            with decode_errors(self.name):
                block = self._f.read(out=buffer)
            if len(block) == 0:
                return
            yield block

    def close(self) -> None:
        self._f.close()
