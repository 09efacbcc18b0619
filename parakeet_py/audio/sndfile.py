"""The libsndfile decoder (through ``soundfile``): WAV, FLAC, Ogg Vorbis/Opus, MP3 and, outside
an allowlist, every other format the installed libsndfile reads (AIFF, AU, CAF, W64, ...)."""

from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator, Optional

import numpy as np
import soundfile

from ..errors import InvalidAudio
from .formats import Container
from .samples import BLOCK_FRAMES

# libsndfile's "length unknown" (SF_COUNT_MAX).
_UNKNOWN_FRAMES = (1 << 63) - 1

# libsndfile logs a WAV data chunk that claims more than the file holds as
# "data : <claimed> (should be <held>)" and then reads what is there (its stated length shrinks
# to match); 0 and 0xFFFFFFFF are the sizes writers that stream leave, which promise nothing.
_WAV_DATA_LOG = re.compile(r"^data : (\d+) \(should be (\d+)\)$", re.MULTILINE)
_STREAMED_SIZES = (0, 0xFFFFFFFF)
_BYTES_PER_SAMPLE = {"PCM_U8": 1, "PCM_S8": 1, "PCM_16": 2, "PCM_24": 3, "PCM_32": 4, "FLOAT": 4, "DOUBLE": 8}


def check_wav_length(f: soundfile.SoundFile, name: str) -> None:
    """A WAV cut short (its header promises more audio than follows) is an error, as in the
    library's reader and in the same words: transcribing the rest as if whole hides corruption."""
    if f.format != "WAV":
        return
    m = _WAV_DATA_LOG.search(f.extra_info)
    if m is None or int(m.group(1)) in _STREAMED_SIZES:
        return
    promised = int(m.group(1))
    bytes_per_second = _BYTES_PER_SAMPLE.get(f.subtype, 0) * f.channels * f.samplerate
    if bytes_per_second == 0:
        return
    held = f.frames * bytes_per_second // f.samplerate
    raise InvalidAudio(f"{name}: truncated WAV: the header promises {promised / bytes_per_second:.3f} s of audio "
                       f"({promised} bytes), the file holds {held / bytes_per_second:.3f} s ({held} bytes)")


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
        try:
            check_wav_length(self._f, name)
        except InvalidAudio:
            self._f.close()
            raise
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
