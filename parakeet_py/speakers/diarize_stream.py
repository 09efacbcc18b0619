"""Live diarization: :meth:`Diarizer.stream` → :class:`DiarizerStream`, around the C ABI's
``parakeet_capi_diarize_stream_*`` (NeMo's streaming Sortformer: chunks, FIFO and speaker cache;
docs/diarization_streaming.md).

    with d.stream(latency="low") as s:           # 1.04 s
        for pcm in pieces:                        # 16 kHz float32 mono
            for seg in s.feed(pcm):               # the segments that ended
                print(seg)
        rest = s.finish()                         # closes the open ones

The segments do not depend on how the audio is cut into feeds.
"""

from __future__ import annotations

import threading
from typing import Any, List, Union

import numpy as np

from .. import _native
from ..audio.prepare import pcm_samples
from ..errors import InvalidArgument
from ..owned_handle import OwnedHandle
from ..transcript import Segment

#: The latency presets by name, with parakeet.cpp's numbers (PARAKEET_DIAR_LATENCY_*).
LATENCIES = {"model": 0, "low": 1, "very_low": 2, "ultra_low": 3}


def latency_number(latency: Union[str, int]) -> int:
    """"model", "low" (1.04 s), "very_low" (0.64 s), "ultra_low" (0.32 s) or 0..3 → 0..3."""
    if isinstance(latency, bool) or not isinstance(latency, (str, int)):
        raise InvalidArgument(f"latency must be one of {', '.join(LATENCIES)} or 0..3, not {latency!r}")
    if isinstance(latency, str):
        if latency not in LATENCIES:
            raise InvalidArgument(f"unknown latency {latency!r}; use one of {', '.join(LATENCIES)}")
        return LATENCIES[latency]
    return int(latency)  # the library checks the range


def _segments(ffi: Any, lib: Any, out: Any, n: int) -> List[Segment]:
    try:
        # The library's float times hold 2 decimals: round back to them.
        return [Segment(int(out[0][i].speaker), round(float(out[0][i].start), 2), round(float(out[0][i].end), 2))
                for i in range(n)]
    finally:
        lib.parakeet_capi_free_diar_segments(out[0])


class DiarizerStream(OwnedHandle):
    """One live diarization on a :class:`~parakeet_py.speakers.diarize.Diarizer` (which it keeps alive).
    One call at a time (serialised here)."""

    _FREE = "parakeet_capi_diarize_stream_free"
    _CLOSED = "the diarization stream is closed"

    def __init__(self, diarizer: Any, ptr: Any) -> None:
        self._diarizer = diarizer
        self._ptr = ptr
        self._lock = threading.Lock()

    def feed(self, pcm: np.ndarray, is_last: bool = False) -> List[Segment]:
        """Feeds 16 kHz samples (a numpy array, as Stream.feed takes); returns the segments that
        ended, by start then speaker. ``is_last`` ends the audio and closes the open segments."""
        samples = pcm_samples(pcm)
        ffi, lib = _native.load()
        out, n = ffi.new("parakeet_diar_segment**"), ffi.new("int*")
        with self._lock:
            _native.check_status(lib.parakeet_capi_diarize_stream_feed(
                self.handle(), ffi.from_buffer("float[]", samples), len(samples), 1 if is_last else 0, out, n))
            return _segments(ffi, lib, out, n[0])

    def finish(self) -> List[Segment]:
        """Ends the audio: the remaining chunks run and every open segment closes."""
        return self.feed(np.zeros(0, np.float32), is_last=True)

    @property
    def active(self) -> List[Segment]:
        """The segments open now, each ending at :attr:`time`."""
        ffi, lib = _native.load()
        out, n = ffi.new("parakeet_diar_segment**"), ffi.new("int*")
        with self._lock:
            _native.check_status(lib.parakeet_capi_diarize_stream_active(self.handle(), out, n))
            return _segments(ffi, lib, out, n[0])

    @property
    def time(self) -> float:
        """Seconds diarized so far."""
        with self._lock:
            return float(_native.load()[1].parakeet_capi_diarize_stream_time(self._ptr)) if self._ptr else 0.0

    @property
    def chunk_samples(self) -> int:
        """Samples a chunk needs before it runs (the input latency)."""
        with self._lock:
            return int(_native.load()[1].parakeet_capi_diarize_stream_chunk_samples(self._ptr)) if self._ptr else 0
