"""Preparing audio ahead of the backends, within a memory bound, handed out in input order.

A few threads prepare the next items (``decode_fn``: reading, decoding, resampling; libsndfile and
soxr release the GIL) into a buffer; the transcribing threads take them from it in the order of
the items, so a backend never waits for a file read while the next clip is there, and results
can follow their inputs. At most ``max_items`` items are taken ahead of the one handed out next
(preparing or prepared), and the prepared clips waiting hold at most ``max_bytes`` of samples
besides the next one: a single clip larger than that is still let in when it is next, so a long
file never stalls the reader (and an item that is slow to read holds back at most ``max_items``
others). Used by the batch job (:mod:`.batch.prefetch`) and by the batch paths of
:mod:`.batch_call`.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np

#: A prepared item: the item, its samples (None when it could not be prepared) and the reason.
Decoded = Tuple[Any, Optional[np.ndarray], Any]


class ReadAhead:
    """Iterate over it (from any number of threads) to get ``decode_fn(item, rate)`` of each item,
    ``(item, samples or None, error)``, in input order."""

    def __init__(self, items: Iterable[Any], rate: int, decode_fn: Callable[[Any, int], Decoded], *, decoders: int = 2,
                 max_items: int = 8, max_bytes: int = 1 << 30) -> None:
        self._source = enumerate(items)
        self._rate, self._decode = rate, decode_fn
        self._max_items, self._max_bytes = max(1, max_items), max_bytes
        # index -> (decoded entry, its bytes) waiting; None: lost with the decoder thread that died
        self._ready: Dict[int, Optional[Tuple[Decoded, int]]] = {}
        self._next = 0  # the index handed out next
        self._taken = 0  # entries taken from the source
        self._bytes = 0
        self._running = max(1, decoders)
        self._stopped = False
        self._deaths: List[str] = []  # why decoder threads died (each leaves its entry undone)
        self._cond = threading.Condition()
        self._threads = [threading.Thread(target=self._decoder, name=f"batch-decode-{i}", daemon=True)
                         for i in range(self._running)]
        for t in self._threads:
            t.start()

    def _next_entry(self) -> Optional[Tuple[int, Any]]:
        """The next (index, entry) to decode once it is within ``max_items`` of the next handed
        out; None when the source is done or the prefetcher stopped."""
        with self._cond:
            while not self._stopped and self._taken >= self._next + self._max_items:
                self._cond.wait()
            taken = None if self._stopped else next(self._source, None)
            self._taken += taken is not None
            return taken

    def _decoder(self) -> None:
        index = None
        try:
            while not self._stopped:
                taken = self._next_entry()
                if taken is None:
                    return
                index, entry = taken
                item = self._decode(entry, self._rate)
                size = item[1].nbytes if item[1] is not None else 0
                with self._cond:
                    while not self._stopped and index != self._next and self._bytes + size > self._max_bytes:
                        self._cond.wait()
                    self._ready[index] = (item, size)
                    self._bytes += size
                    self._cond.notify_all()
                index = None
        except BaseException as e:  # decode() turns failures into rows; anything else ends the thread
            with self._cond:
                self._deaths.append(f"{threading.current_thread().name}: {type(e).__name__}: {e}")
                if index is not None:
                    self._ready[index] = None  # get() passes over it; the job reports the row missing
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def get(self) -> Optional[Decoded]:
        """The next decoded entry in input order, or None once every entry has been handed out."""
        with self._cond:
            while True:
                if self._next in self._ready:
                    ready = self._ready.pop(self._next)
                    self._next += 1
                    self._cond.notify_all()
                    if ready is None:
                        continue
                    item, size = ready
                    self._bytes -= size
                    return item
                if self._stopped or not self._running:
                    return None
                self._cond.wait()

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
            self._ready.clear()
            self._bytes = 0
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
            return sum(ready is not None for ready in self._ready.values()), self._bytes

    def __enter__(self) -> "ReadAhead":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
