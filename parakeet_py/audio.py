"""Audio in: files (anything libsndfile reads), bytes, file objects and numpy arrays.

Everything ends up as float32 mono samples at the model's rate, which is what the library's
``*_pcm`` functions take:

* files, bytes and file objects are decoded with ``soundfile`` (WAV, FLAC, OGG/Vorbis, MP3,
  AIFF, ... as the installed libsndfile supports), as float32;
* integer arrays are scaled to [-1, 1] (signed: divided by 2^(bits-1); unsigned: centred
  first, as 8-bit WAV is), float arrays are taken as they are;
* several channels ([frames, channels]) are averaged to mono;
* other sample rates are resampled with soxr (high quality) in Python.

Every problem is a :class:`~parakeet_py.errors.ParakeetError` whose message names the input:
:class:`~parakeet_py.errors.InvalidAudio` for the audio itself (missing, unreadable, corrupt,
NaN/Inf, a bad rate or shape), :class:`~parakeet_py.errors.InvalidArgument` for a misused
``sample_rate``.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from typing import Any, BinaryIO, Iterator, Optional, Union

import numpy as np
import soundfile
import soxr

from .errors import InvalidArgument, InvalidAudio

# Anything accepted as an audio source by load_audio / Context.transcribe.
AudioSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO, np.ndarray]

# More channels than this in a 2-D array almost certainly means [channels, frames] was passed.
MAX_CHANNELS = 64

# Audio is decoded, converted, mixed down and resampled this many frames at a time, so a long
# input is never held twice over (as float64 and float32, as stereo and mono, or at two rates):
# only the source, the one output array and a block.
BLOCK_FRAMES = 1 << 18


def _describe(source: Any) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return f"<{len(source)} bytes of audio>"
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<audio stream>"


def _open_file(source: Any) -> soundfile.SoundFile:
    """Open a path, bytes or a binary file object for decoding."""
    name = _describe(source)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise InvalidAudio(f"{path}: no such file")
        if os.path.isdir(path):
            raise InvalidAudio(f"{path}: is a directory, not an audio file")
    elif isinstance(source, (bytes, bytearray, memoryview)):
        source = io.BytesIO(source)
    elif not hasattr(source, "read"):
        raise InvalidAudio(
            f"cannot read audio from a {type(source).__name__}: pass a path, bytes, a binary file "
            "object or a numpy array"
        )
    with _decode_errors(name):
        f = soundfile.SoundFile(source)
    try:
        _check_wav_length(f, name)
    except InvalidAudio:
        f.close()
        raise
    return f


# libsndfile logs a WAV data chunk that claims more than the file holds as
# "data : <claimed> (should be <held>)" and then reads what is there; 0 and 0xFFFFFFFF are the
# sizes writers that stream leave (the length was not known), which promise nothing.
_WAV_DATA_LOG = re.compile(r"^data : (\d+) \(should be (\d+)\)$", re.MULTILINE)
_STREAMED_SIZES = (0, 0xFFFFFFFF)
_BYTES_PER_SAMPLE = {"PCM_U8": 1, "PCM_S8": 1, "PCM_16": 2, "PCM_24": 3, "PCM_32": 4, "FLOAT": 4, "DOUBLE": 8}


def _check_wav_length(f: soundfile.SoundFile, name: str) -> None:
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
def _decode_errors(name: str) -> Iterator[None]:
    """Turn what soundfile raises for a bad file into an InvalidAudio naming the input."""
    try:
        yield
    except soundfile.LibsndfileError as e:
        raise InvalidAudio(f"{name}: cannot decode audio: {e.error_string}") from e
    except (RuntimeError, OSError, ValueError, TypeError, EOFError) as e:
        raise InvalidAudio(f"{name}: cannot decode audio: {e}") from e


def _file_blocks(f: "soundfile.SoundFile", name: str) -> Iterator[np.ndarray]:
    """The file's frames as [n, channels] float32 blocks, all read into one reused buffer."""
    buffer = np.empty((BLOCK_FRAMES, f.channels), dtype=np.float32)
    while True:
        with _decode_errors(name):
            block = f.read(out=buffer)
        if len(block) == 0:
            return
        yield block


def _as_float(array: np.ndarray) -> np.ndarray:
    """A real array (checked by _check_array) → float32 samples (integers scaled to [-1, 1])."""
    kind = array.dtype.kind
    if kind == "f":
        return array.astype(np.float32, copy=False)
    # In float64, in place: exact for every integer width up to 32 bits, one temporary.
    half = float(2 ** (8 * array.dtype.itemsize - 1))
    wide = array.astype(np.float64)
    if kind == "u":
        wide -= half
    wide /= half
    return wide.astype(np.float32)


def _check_array(array: np.ndarray, name: str) -> None:
    """Arrays must be real, 1-D or 2-D [frames, channels] with a plausible channel count."""
    if array.ndim == 0:
        raise InvalidAudio(f"{name}: audio arrays must be 1-D (mono) or 2-D [frames, channels], not a scalar")
    if array.dtype.kind not in "fiu":
        raise InvalidAudio(f"{name}: audio arrays must hold real numbers (float or int), not {array.dtype}")
    if array.ndim > 2:
        raise InvalidAudio(f"{name}: audio arrays must be 1-D (mono) or 2-D [frames, channels], not {array.ndim}-D")
    if array.ndim == 2:
        channels = array.shape[1]
        if channels == 0:
            raise InvalidAudio(f"{name}: audio array has 0 channels")
        if channels > MAX_CHANNELS:
            raise InvalidAudio(
                f"{name}: audio array of shape {array.shape} would have {channels} channels; arrays are "
                "[frames, channels] (transpose a [channels, frames] array with .T)"
            )


def _array_blocks(array: np.ndarray) -> Iterator[np.ndarray]:
    """The array's frames as float32 blocks (1-D, or [n, channels]), converted one at a time."""
    for begin in range(0, len(array), BLOCK_FRAMES):
        yield _as_float(array[begin:begin + BLOCK_FRAMES])


def _mono(block: np.ndarray) -> np.ndarray:
    """A float32 block, 1-D or [n, channels] averaged over channels."""
    if block.ndim == 1:
        return block
    return block[:, 0] if block.shape[1] == 1 else block.mean(axis=1, dtype=np.float32)


def _check_finite(samples: np.ndarray, name: str, offset: int = 0) -> None:
    bad = np.flatnonzero(~np.isfinite(samples))
    if bad.size:
        raise InvalidAudio(f"{name}: sample {offset + int(bad[0])} is not a finite number (NaN or Inf)")


def _check_rate(rate: Any, name: str) -> int:
    if isinstance(rate, bool) or not isinstance(rate, (int, np.integer)) or rate <= 0:
        raise InvalidAudio(f"{name}: sample rate must be a positive integer, not {rate!r}")
    return int(rate)


class _MonoOutput:
    """Collects mono float32 blocks at ``rate`` into one array at ``target_rate``.

    Blocks are resampled as they come by a soxr stream (HQ), whose output is bitwise that of
    ``soxr.resample`` on the whole signal, into an output allocated once at its expected size:
    the source is never held at its own rate in full, nor the output twice.
    """

    def __init__(self, name: str, rate: int, target_rate: int, frames_hint: int, check_finite: bool):
        self._name = name
        self._check_finite = check_finite
        self._stream = (
            None if rate == target_rate
            else soxr.ResampleStream(rate, target_rate, 1, dtype="float32", quality="HQ")
        )
        # soxr's total can differ from the exact ratio by a sample or so; _put grows if needed.
        expected = frames_hint if self._stream is None else -(-frames_hint * target_rate // rate) + 2
        self._out = np.empty(max(expected, 0), dtype=np.float32)
        self._n = 0
        self._seen = 0  # input samples so far, to name a bad sample by its position

    def add(self, samples: np.ndarray) -> None:
        if self._check_finite:
            _check_finite(samples, self._name, self._seen)
        self._seen += samples.size
        if self._stream is None:
            self._put(samples)
        else:
            self._put(self._stream.resample_chunk(np.ascontiguousarray(samples), last=False))

    def finish(self) -> np.ndarray:
        if self._stream is not None:
            self._put(self._stream.resample_chunk(np.empty(0, dtype=np.float32), last=True))
        # Shrinks in place (realloc): no second copy of a long output.
        self._out.resize(self._n, refcheck=False)
        return self._out

    def _put(self, samples: np.ndarray) -> None:
        end = self._n + samples.size
        if end > self._out.size:  # a file that did not know its length, or soxr's extra sample
            self._out.resize(max(end, self._out.size * 3 // 2 + BLOCK_FRAMES), refcheck=False)
        self._out[self._n:end] = samples
        self._n = end


def prepare_audio(
    source: AudioSource, *, sample_rate: Optional[int] = None, target_rate: int = 16000,
    check_finite: bool = True,
) -> np.ndarray:
    """Turn any accepted source into contiguous float32 mono samples at ``target_rate``.

    ``sample_rate`` is required for arrays and ignored (it must be None) for files.
    With ``check_finite=False`` NaN/Inf samples that need no resampling are passed on untouched
    (the library rejects them itself, naming the sample); resampled audio is always checked,
    since the resampler would smear a bad sample over its neighbours.
    """
    target_rate = _check_rate(target_rate, "target_rate")
    name = _describe(source) if not isinstance(source, np.ndarray) else "audio array"
    if isinstance(source, np.ndarray):
        if sample_rate is None:
            raise InvalidArgument(f"{name}: sample_rate is required for audio arrays")
        rate = _check_rate(sample_rate, name)
        _check_array(source, name)
        check = check_finite or rate != target_rate
        if rate == target_rate and source.ndim == 1 and source.dtype == np.float32:
            # Already what the library takes: passed on without a copy (unless not contiguous).
            if check:
                _check_finite(source, name)
            return np.ascontiguousarray(source)
        out = _MonoOutput(name, rate, target_rate, len(source), check)
        for block in _array_blocks(source):
            out.add(_mono(block))
        return out.finish()
    if sample_rate is not None:
        raise InvalidArgument(f"{name}: sample_rate is only for audio arrays; files carry their own rate")
    with _open_file(source) as f:
        rate = int(f.samplerate)
        frames = f.frames if f.seekable() else 0
        out = _MonoOutput(name, rate, target_rate, frames, check_finite or rate != target_rate)
        for block in _file_blocks(f, name):
            out.add(_mono(block))
    return out.finish()


def load_audio(source: AudioSource, *, target_rate: int = 16000, sample_rate: Optional[int] = None) -> np.ndarray:
    """Decode ``source`` to float32 mono samples at ``target_rate`` Hz.

    ``source``: a path (``str`` or ``os.PathLike``) to any format libsndfile reads (WAV, FLAC,
    OGG, MP3, ...), the file's bytes, a binary file object, or a numpy array (1-D mono or 2-D
    ``[frames, channels]``, any float or int dtype) together with its ``sample_rate``.
    Raises :class:`ParakeetError` for a missing, unreadable, corrupt or unsupported input, and
    for NaN/Inf samples.
    """
    return prepare_audio(source, sample_rate=sample_rate, target_rate=target_rate, check_finite=True)
