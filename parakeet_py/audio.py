"""Audio in: files (anything libsndfile reads), bytes, file objects and numpy arrays.

Everything ends up as float32 mono samples at the model's rate, which is what the library's
``*_pcm`` functions take:

* files, bytes and file objects are decoded with ``soundfile`` (WAV, FLAC, OGG/Vorbis, MP3,
  AIFF, ... as the installed libsndfile supports), as float32;
* integer arrays are scaled to [-1, 1] (signed: divided by 2^(bits-1); unsigned: centred
  first, as 8-bit WAV is), float arrays are taken as they are;
* several channels ([frames, channels]) are averaged to mono;
* other sample rates are resampled with soxr (high quality) in Python.

Every problem is a :class:`ParakeetError` whose message names the input.
"""

from __future__ import annotations

import io
import os
from typing import Any, BinaryIO, Optional, Tuple, Union

import numpy as np
import soundfile
import soxr

from .errors import ParakeetError

# Anything accepted as an audio source by load_audio / Context.transcribe.
AudioSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO, np.ndarray]

# More channels than this in a 2-D array almost certainly means [channels, frames] was passed.
MAX_CHANNELS = 64


def _describe(source: Any) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return f"<{len(source)} bytes of audio>"
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<audio stream>"


def _read_file(source: Any) -> Tuple[np.ndarray, int]:
    """Decode a path, bytes or a binary file object: ([frames, channels] float32, rate)."""
    name = _describe(source)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise ParakeetError(f"{path}: no such file")
        if os.path.isdir(path):
            raise ParakeetError(f"{path}: is a directory, not an audio file")
    elif isinstance(source, (bytes, bytearray, memoryview)):
        source = io.BytesIO(bytes(source))
    elif not hasattr(source, "read"):
        raise ParakeetError(
            f"cannot read audio from a {type(source).__name__}: pass a path, bytes, a binary file "
            "object or a numpy array"
        )
    try:
        data, rate = soundfile.read(source, dtype="float32", always_2d=True)
    except soundfile.LibsndfileError as e:
        raise ParakeetError(f"{name}: cannot decode audio: {e.error_string}") from e
    except (RuntimeError, OSError, ValueError, TypeError, EOFError) as e:
        raise ParakeetError(f"{name}: cannot decode audio: {e}") from e
    return data, int(rate)


def _as_float(array: np.ndarray, name: str) -> np.ndarray:
    """Any real dtype → float32 samples (integers scaled to [-1, 1])."""
    kind = array.dtype.kind
    if kind == "f":
        return array.astype(np.float32, copy=False)
    if kind == "i":
        scale = float(2 ** (8 * array.dtype.itemsize - 1))
        return (array.astype(np.float64) / scale).astype(np.float32)
    if kind == "u":
        half = float(2 ** (8 * array.dtype.itemsize - 1))
        return ((array.astype(np.float64) - half) / half).astype(np.float32)
    raise ParakeetError(f"{name}: audio arrays must hold real numbers (float or int), not {array.dtype}")


def _mono(array: np.ndarray, name: str) -> np.ndarray:
    """1-D, or [frames, channels] averaged over channels."""
    if array.ndim == 1:
        return array
    if array.ndim == 2:
        channels = array.shape[1]
        if channels == 0:
            raise ParakeetError(f"{name}: audio array has 0 channels")
        if channels > MAX_CHANNELS:
            raise ParakeetError(
                f"{name}: audio array of shape {array.shape} would have {channels} channels; arrays are "
                "[frames, channels] (transpose a [channels, frames] array with .T)"
            )
        return array[:, 0] if channels == 1 else array.mean(axis=1, dtype=np.float32)
    raise ParakeetError(f"{name}: audio arrays must be 1-D (mono) or 2-D [frames, channels], not {array.ndim}-D")


def _check_finite(samples: np.ndarray, name: str) -> None:
    bad = np.flatnonzero(~np.isfinite(samples))
    if bad.size:
        raise ParakeetError(f"{name}: sample {int(bad[0])} is not a finite number (NaN or Inf)")


def _check_rate(rate: Any, name: str) -> int:
    if isinstance(rate, bool) or not isinstance(rate, (int, np.integer)) or rate <= 0:
        raise ParakeetError(f"{name}: sample rate must be a positive integer, not {rate!r}")
    return int(rate)


def resample(samples: np.ndarray, rate: int, target_rate: int) -> np.ndarray:
    """float32 mono ``samples`` from ``rate`` to ``target_rate`` Hz (soxr, high quality)."""
    if rate == target_rate or samples.size == 0:
        return np.ascontiguousarray(samples, dtype=np.float32)
    out = soxr.resample(np.ascontiguousarray(samples, dtype=np.float32), rate, target_rate, quality="HQ")
    return np.ascontiguousarray(out, dtype=np.float32)


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
        array = source
        if sample_rate is None:
            raise ParakeetError(f"{name}: sample_rate is required for audio arrays")
        rate = _check_rate(sample_rate, name)
        if array.ndim == 0:
            raise ParakeetError(f"{name}: audio arrays must be 1-D (mono) or 2-D [frames, channels], not a scalar")
        samples = _mono(_as_float(array, name), name)
    else:
        if sample_rate is not None:
            raise ParakeetError(f"{name}: sample_rate is only for audio arrays; files carry their own rate")
        data, rate = _read_file(source)
        samples = _mono(data, name)
    if check_finite or rate != target_rate:
        _check_finite(samples, name)
    return resample(samples, rate, target_rate)


def load_audio(source: AudioSource, *, target_rate: int = 16000, sample_rate: Optional[int] = None) -> np.ndarray:
    """Decode ``source`` to float32 mono samples at ``target_rate`` Hz.

    ``source``: a path (``str`` or ``os.PathLike``) to any format libsndfile reads (WAV, FLAC,
    OGG, MP3, ...), the file's bytes, a binary file object, or a numpy array (1-D mono or 2-D
    ``[frames, channels]``, any float or int dtype) together with its ``sample_rate``.
    Raises :class:`ParakeetError` for a missing, unreadable, corrupt or unsupported input, and
    for NaN/Inf samples.
    """
    return prepare_audio(source, sample_rate=sample_rate, target_rate=target_rate, check_finite=True)
