"""Turns on the K backends, handed out client by client rather than first come, first served.

Everything that computes on a backend takes a turn first: a queued transcription for its whole
job, a live stream for each feed. At most K turns are out, so the library never makes a caller
wait for a backend (its own lending is first come, first served: behind eight streams of one
client feeding 5-minute appends, a 2 s request would wait for all their chunks). When a turn
comes back it goes to the waiter whose client has the fewest turns held or waited for; among
those, to the client whose last turn began longest ago (round robin: the client whose turn just
ended goes last), then the earliest. So a client with nothing in flight waits for one turn to
end, however many requests and streams another client keeps busy. Touched on the event loop
thread only.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, TypeVar

T = TypeVar("T")


@dataclass(eq=False)
class _Waiter:
    client: str
    seq: int
    future: asyncio.Future = field(repr=False)


class FairTurns:
    def __init__(self, turns: int) -> None:
        self.turns = turns
        self._free = turns
        self._active: Counter = Counter()  # per client: turns held and waited for
        self._last_turn: Dict[str, int] = {}  # per client with turns active: when its last began
        self._turn_count = itertools.count()
        self._waiters: List[_Waiter] = []
        self._seq = itertools.count()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def active(self, client: str) -> int:
        return self._active[client]

    async def acquire(self, client: str) -> None:
        """Waits for a turn (cancellable: a cancelled waiter leaves no trace)."""
        self._active[client] += 1
        if self._free > 0 and not any(not w.future.done() for w in self._waiters):
            self._free -= 1
            self._last_turn[client] = next(self._turn_count)
            return
        waiter = _Waiter(client, next(self._seq), asyncio.get_running_loop().create_future())
        self._waiters.append(waiter)
        try:
            await waiter.future
        except BaseException:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
                self._drop(client)
            else:  # handed a turn, then cancelled before it resumed: give the turn on
                self.release(client)
            raise

    def release(self, client: str) -> None:
        self._drop(client)
        self._free += 1
        while self._free > 0:
            # (a cancelled waiter stays listed until its task resumes and removes itself)
            ready = [w for w in self._waiters if not w.future.done()]
            if not ready:
                return
            waiter = min(ready, key=lambda w: (self._active[w.client], self._last_turn.get(w.client, -1), w.seq))
            self._waiters.remove(waiter)
            self._free -= 1
            self._last_turn[waiter.client] = next(self._turn_count)
            waiter.future.set_result(None)

    def _drop(self, client: str) -> None:
        self._active[client] -= 1
        if self._active[client] <= 0:
            del self._active[client]
            self._last_turn.pop(client, None)

    async def run(self, executor: Executor, client: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on ``executor`` in a turn of ``client``'s. The turn is held until ``fn``
        has returned, even when the awaiting task is cancelled meanwhile (``fn`` still holds its
        backend then)."""
        await self.acquire(client)
        try:
            future = executor.submit(fn, *args)
        except BaseException:
            self.release(client)
            raise
        loop = asyncio.get_running_loop()
        future.add_done_callback(lambda _: loop.call_soon_threadsafe(self.release, client))
        return await asyncio.wrap_future(future)
