"""Audio in: files, bytes, file objects and numpy arrays.

Everything ends up as float32 mono samples at the model's rate, which is what the library's
``*_pcm`` functions take:

* files, bytes and file objects are decoded block by block, by the decoder their first bytes
  call for (:mod:`.decode`): libsndfile for WAV, FLAC, Ogg Vorbis/Opus and MP3 (and,
  unless an allowlist is given, the other formats it reads: AIFF, AU, CAF, ...), FFmpeg through
  PyAV for M4A/MP4/MOV, WebM/Matroska, MPEG program streams and AMR;
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

import os
from typing import Any, BinaryIO, Callable, Collection, Iterator, Optional, Union

import numpy as np
import soxr

from ..errors import InvalidArgument, InvalidAudio
from .decode import check_complete, open_decoder
from .samples import BLOCK_FRAMES, as_float, mono

# Anything accepted as an audio source by load_audio / Context.transcribe.
AudioSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO, np.ndarray]

# More channels than this in a 2-D array almost certainly means [channels, frames] was passed.
MAX_CHANNELS = 64

# A header's length preallocates the output up to this many frames (20 min at 16 kHz); a longer
# file grows it as it decodes, so a header that lies about its length allocates nothing for it.
PREALLOCATE_MAX_FRAMES = 20 * 60 * 16000


def _describe(source: Any) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return f"<{len(source)} bytes of audio>"
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<audio stream>"


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


def pcm_samples(pcm: Any) -> np.ndarray:
    """A numpy array (1-D mono or 2-D [frames, channels], any real dtype, ints scaled to
    [-1, 1]) → contiguous float32 mono samples."""
    if not isinstance(pcm, np.ndarray):
        raise InvalidAudio(f"feed takes a numpy array of samples, not a {type(pcm).__name__}")
    _check_array(pcm, "audio array")
    if pcm.ndim == 1 and pcm.dtype == np.float32:
        return np.ascontiguousarray(pcm)
    return np.ascontiguousarray(mono(as_float(pcm)), dtype=np.float32)


def _array_blocks(array: np.ndarray) -> Iterator[np.ndarray]:
    """The array's frames as float32 blocks (1-D, or [n, channels]), converted one at a time."""
    for begin in range(0, len(array), BLOCK_FRAMES):
        yield as_float(array[begin:begin + BLOCK_FRAMES])


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
    check_finite: bool = True, formats: Optional[Collection[str]] = None,
    limit: Optional[Callable[[int, int, int], None]] = None,
) -> np.ndarray:
    """Turn any accepted source into contiguous float32 mono samples at ``target_rate``.

    ``sample_rate`` is required for arrays and ignored (it must be None) for files.
    With ``check_finite=False`` NaN/Inf samples that need no resampling are passed on untouched
    (the library rejects them itself, naming the sample); resampled audio is always checked,
    since the resampler would smear a bad sample over its neighbours.

    For files: ``formats`` limits the containers (and their codecs) decoded, by the names in
    :data:`.formats.CONTAINERS` (None: every format either decoder reads). ``limit`` is
    called with (frames, sample rate, channels) of the source, first with the length its header
    states, then after each decoded block with the frames so far; whatever it raises stops the
    decoding, so a length limit holds before the audio is whole.
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
            out.add(mono(block))
        return out.finish()
    if sample_rate is not None:
        raise InvalidArgument(f"{name}: sample_rate is only for audio arrays; files carry their own rate")
    with open_decoder(source, name, formats) as decoder:
        rate, channels, stated = decoder.rate, decoder.channels, decoder.stated_frames
        if limit is not None and stated is not None:
            limit(stated, rate, channels)
        hint = min(stated or 0, PREALLOCATE_MAX_FRAMES * rate // 16000)
        out = _MonoOutput(name, rate, target_rate, hint, check_finite or rate != target_rate)
        decoded = 0
        for block in decoder.blocks():
            decoded += len(block)
            if limit is not None:
                limit(decoded, rate, channels)
            out.add(mono(block))
        check_complete(decoder, decoded)
    return out.finish()


#: The most samples one request can hand the library (its lengths are C ints).
MAX_REQUEST_SAMPLES = 2**31 - 1


def request_samples(source: AudioSource, sample_rate: Optional[int], target_rate: int,
                    check_finite: bool = False) -> np.ndarray:
    """The samples of one transcription request, as ``Context.transcribe`` hands them to the
    library: :func:`prepare_audio` (by default leaving NaN/Inf for the library to name), and no
    more than one C call can take."""
    samples = prepare_audio(source, sample_rate=sample_rate, target_rate=target_rate, check_finite=check_finite)
    if samples.size > MAX_REQUEST_SAMPLES:
        raise InvalidAudio(f"audio of {samples.size} samples is too long for one request")
    return samples


def load_audio(source: AudioSource, *, target_rate: int = 16000, sample_rate: Optional[int] = None) -> np.ndarray:
    """Decode ``source`` to float32 mono samples at ``target_rate`` Hz.

    ``source``: a path (``str`` or ``os.PathLike``) to an audio file (WAV, FLAC, Ogg, MP3, M4A,
    MP4, WebM, ...: docs/python.md lists them), the file's bytes, a binary file object, or a
    numpy array (1-D mono or 2-D ``[frames, channels]``, any float or int dtype) together with
    its ``sample_rate``. Raises :class:`ParakeetError` for a missing, unreadable, corrupt,
    truncated or unsupported input, and for NaN/Inf samples.
    """
    return prepare_audio(source, sample_rate=sample_rate, target_rate=target_rate, check_finite=True)
