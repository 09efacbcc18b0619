"""Decoding audio ahead of the backends, within a memory bound.

A few decoder threads read and decode the next files (``prepare_audio``: libsndfile and soxr
release the GIL) into a buffer that holds at most ``max_items`` clips and ``max_bytes`` of
samples (a single clip larger than that is still let in when the buffer is empty, so a long
file never stalls the job). The transcribing threads take decoded clips from it, so a backend
never waits for a file read while the buffer is not empty. At most ``max_items`` + one per
decoder thread clips are held at once.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, Callable, Deque, Iterable, Iterator, List, Optional, Tuple

import numpy as np

from ..audio.prepare import prepare_audio
from ..errors import ParakeetError
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


class Prefetcher:
    """Iterate over it (from any number of threads) to get Decoded entries in completion order."""

    def __init__(self, entries: Iterable[Entry], rate: int, *, decoders: int = 2, max_items: int = 8,
                 max_bytes: int = 1 << 30, decode_fn: Callable[[Entry, int], Decoded] = decode) -> None:
        self._source = iter(entries)
        self._rate, self._decode = rate, decode_fn
        self._max_items, self._max_bytes = max(1, max_items), max_bytes
        self._buffer: Deque[Tuple[Decoded, int]] = deque()
        self._bytes = 0
        self._running = max(1, decoders)
        self._stopped = False
        self._deaths: List[str] = []  # why decoder threads died (each leaves its entry undone)
        self._cond = threading.Condition()
        self._source_lock = threading.Lock()
        self._threads = [threading.Thread(target=self._decoder, name=f"batch-decode-{i}", daemon=True)
                         for i in range(self._running)]
        for t in self._threads:
            t.start()

    def _next_entry(self) -> Optional[Entry]:
        with self._source_lock:
            return next(self._source, None)

    def _decoder(self) -> None:
        try:
            while not self._stopped:
                entry = self._next_entry()
                if entry is None:
                    return
                item = self._decode(entry, self._rate)
                size = item[1].nbytes if item[1] is not None else 0
                with self._cond:
                    while not self._stopped and self._buffer and (
                            len(self._buffer) >= self._max_items or self._bytes + size > self._max_bytes):
                        self._cond.wait()
                    self._buffer.append((item, size))
                    self._bytes += size
                    self._cond.notify_all()
        except BaseException as e:  # decode() turns failures into rows; anything else ends the thread
            with self._cond:
                self._deaths.append(f"{threading.current_thread().name}: {type(e).__name__}: {e}")
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def get(self) -> Optional[Decoded]:
        """The next decoded entry, or None once every entry has been handed out."""
        with self._cond:
            while not self._buffer and self._running and not self._stopped:
                self._cond.wait()
            if not self._buffer:
                return None
            item, size = self._buffer.popleft()
            self._bytes -= size
            self._cond.notify_all()
            return item

    def __iter__(self) -> Iterator[Decoded]:
        while True:
            item = self.get()
            if item is None:
                return
            yield item

    def stop(self) -> None:
        """Stop decoding (what is buffered is dropped) and wait for the decoder threads."""
        with self._cond:
            self._stopped = True
            self._buffer.clear()
            self._cond.notify_all()
        for t in self._threads:
            t.join()

    @property
    def deaths(self) -> List[str]:
        """Why decoder threads died, if any did (the job must then report rows missing)."""
        with self._cond:
            return list(self._deaths)

    @property
    def buffered(self) -> Tuple[int, int]:
        """(clips, bytes) decoded and waiting now."""
        with self._cond:
            return len(self._buffer), self._bytes

    def __enter__(self) -> "Prefetcher":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
