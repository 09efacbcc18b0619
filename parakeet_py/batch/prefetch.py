"""The batch job's decoding of manifest entries ahead of the backends, in input order within a
memory bound (:class:`..read_ahead.ReadAhead` with :func:`decode`)."""

from __future__ import annotations

from typing import Callable, Iterable, Optional, Tuple

import numpy as np

from ..audio.prepare import prepare_audio
from ..errors import ParakeetError
from ..read_ahead import ReadAhead
from .manifest import Entry
from .rows import error_message

#: A decoded entry: its samples, or the reason it could not be decoded.
Decoded = Tuple[Entry, Optional[np.ndarray], Optional[str]]


def decode(entry: Entry, rate: int) -> Decoded:
    """``entry``'s audio as float32 mono at ``rate``, exactly as ``Context.transcribe(path)``
    prepares it (``check_finite=False``: NaN/Inf samples are left for the library to name).
    Every failure is the entry's error, a MemoryError included (a header that claims 2^36
    samples): a decoder thread must never die of one file."""
    try:
        return entry, prepare_audio(entry.path, target_rate=rate, check_finite=False), None
    except ParakeetError as e:
        return entry, None, str(e)
    except Exception as e:
        return entry, None, error_message(entry.path, f"cannot decode audio: {type(e).__name__}: {e}")


class Prefetcher(ReadAhead):
    """Iterate over it (from any number of threads) to get Decoded entries in input order."""

    def __init__(self, entries: Iterable[Entry], rate: int, *, decoders: int = 2, max_items: int = 8,
                 max_bytes: int = 1 << 30, decode_fn: Callable[[Entry, int], Decoded] = decode) -> None:
        super().__init__(entries, rate, decode_fn, decoders=decoders, max_items=max_items, max_bytes=max_bytes)
