"""Admission control and the worker threads that run transcriptions.

At most ``workers`` jobs run at once (one per backend of the Context: the binding releases
the GIL, so they truly run in parallel) and at most ``max_waiting`` more wait for a worker.
A request beyond that is refused at once (:class:`Overloaded`, answered 503 with
Retry-After) instead of piling up: a client is better served by a quick "try again" than
by a queue that grows until every request times out.

A request takes its place (:meth:`TranscriptionQueue.reserve`) before its body is read, so that
at most ``workers + max_waiting`` uploads are being received at once (200 parallel 25 MiB
uploads would otherwise spool 5 GB to disk before the first refusal), and one client (IP
address) holds at most its share of the places.

Fairness, so that a client with nothing in flight is served within one service slot however
hard others push: a waiting request gets a worker through :class:`~.turns.FairTurns` (the
client with the fewest turns goes first, not the oldest request), and a newcomer that finds
every place taken takes the place of the newest request not yet running of the client holding
the most places (at least two; that request is answered 503 with Retry-After). A request
waits at most ``max_wait`` seconds for a worker, then it is answered 503 too.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Awaitable, Callable, Dict, Optional, TypeVar

from .clients import Shares, share_limit
from .metrics import Metrics
from .turns import FairTurns

T = TypeVar("T")

# Weight of the newest job in the moving average of job times used for Retry-After.
_EWMA_WEIGHT = 0.2
MAX_RETRY_AFTER_SEC = 60


class Overloaded(Exception):
    """Every worker is busy and the waiting room is full, or the client holds its share; or a
    newcomer took this request's place, or it waited too long."""

    def __init__(self, retry_after: int, reason: str = "") -> None:
        super().__init__(reason or f"retry after {retry_after} s")
        self.retry_after = retry_after
        self.reason = reason


@dataclass(eq=False)
class Ticket:
    """A place in the queue, from before the body is read until the job is over."""

    client: str
    seq: int = 0
    running: bool = False  # handed to run(), which gives the place back when the job ends
    released: bool = False
    started: bool = False  # on a worker: it can no longer be displaced
    lost: Optional[Overloaded] = None  # why a newcomer took its place
    interrupt: Optional[Callable[[], None]] = None  # cancels what the request awaits now


class TranscriptionQueue:
    def __init__(self, workers: int, max_waiting: int, metrics: Metrics, client_share: float = 1.0,
                 turns: Optional[FairTurns] = None, max_wait: Optional[float] = None) -> None:
        self.workers = workers
        self.max_waiting = max_waiting
        self.max_wait = max_wait
        self._shares = Shares(share_limit(workers + max_waiting, client_share))
        self._turns = turns if turns is not None else FairTurns(workers)
        self._metrics = metrics
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="parakeet-worker")
        # Places taken and not given back, by ticket number. Only touched on the event loop
        # thread (admission and release both happen there), so it needs no lock.
        self._tickets: Dict[int, Ticket] = {}
        self._seq = itertools.count()
        self._lock = threading.Lock()  # guards _job_sec, updated from worker threads
        self._job_sec = 1.0

    @property
    def admitted(self) -> int:
        return len(self._tickets)

    def retry_after(self) -> int:
        """Seconds until a worker is likely free: the queue ahead, drained K at a time."""
        with self._lock:
            job = self._job_sec
        rounds = (self.admitted - self.workers) / self.workers + 1
        return max(1, min(MAX_RETRY_AFTER_SEC, math.ceil(job * max(rounds, 1))))

    def reserve(self, client: str = "") -> Ticket:
        """A place for ``client``'s request, or :class:`Overloaded` at once."""
        capacity = self.workers + self.max_waiting
        if self.admitted >= capacity:
            victim = self._displaceable() if self._shares.held(client) == 0 else None
            if victim is None:
                raise Overloaded(self.retry_after())
            self._displace(victim)
        if not self._shares.take(client):
            raise Overloaded(self.retry_after(), f"this client holds its share of the queue ({self._shares.limit} "
                                                 f"of {capacity} requests); retry later")
        ticket = Ticket(client, next(self._seq))
        self._tickets[ticket.seq] = ticket
        return ticket

    def _displaceable(self) -> Optional[Ticket]:
        """The newest request not yet on a worker of the client holding the most places (two
        at least), or None."""
        candidates = [t for t in self._tickets.values() if not t.started and self._shares.held(t.client) >= 2]
        if not candidates:
            return None
        return max(candidates, key=lambda t: (self._shares.held(t.client), t.seq))

    def _displace(self, ticket: Ticket) -> None:
        ticket.lost = Overloaded(self.retry_after(), f"a client with no request in flight took this request's "
                                                     f"place (this client held {self._shares.held(ticket.client)} "
                                                     f"of {self.workers + self.max_waiting}); retry later")
        self._give_back(ticket)
        if ticket.interrupt is not None:
            ticket.interrupt()

    def _give_back(self, ticket: Ticket) -> None:
        if ticket.released:
            return
        ticket.released = True
        del self._tickets[ticket.seq]
        self._shares.give_back(ticket.client)

    def release(self, ticket: Ticket) -> None:
        """Gives back a place that was not handed to :meth:`run` (idempotent)."""
        if not ticket.running:
            self._give_back(ticket)

    async def hold(self, ticket: Ticket, step: Awaitable[T]) -> T:
        """Awaits ``step`` (reading the body) in ``ticket``'s place; raises :class:`Overloaded`
        when a newcomer takes the place meanwhile."""
        task = asyncio.ensure_future(step)
        ticket.interrupt = task.cancel
        try:
            return await task
        except asyncio.CancelledError:
            if ticket.lost is not None:
                raise ticket.lost from None
            raise
        finally:
            ticket.interrupt = None

    async def run(self, job: Callable[[], T], ticket: Optional[Ticket] = None) -> T:
        """Runs ``job`` on a worker thread in ``ticket``'s place (None: takes one now, or raises
        :class:`Overloaded` at once)."""
        ticket = self.reserve() if ticket is None else ticket
        if ticket.lost is not None:
            raise ticket.lost
        assert not ticket.running and not ticket.released
        ticket.running = True
        try:
            await self._wait_for_worker(ticket)
        except BaseException:
            self._give_back(ticket)
            raise
        ticket.started = True

        def on_worker() -> T:
            t0 = time.perf_counter()
            try:
                return job()
            finally:
                dt = time.perf_counter() - t0
                with self._lock:
                    self._job_sec += _EWMA_WEIGHT * (dt - self._job_sec)

        loop = asyncio.get_running_loop()
        try:
            future = self._executor.submit(on_worker)
        except BaseException:
            self._turns.release(ticket.client)
            self._give_back(ticket)
            raise
        # Released when the job is really over (not when an awaiting request is cancelled:
        # a running job still holds its worker and its turn).
        future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._finished, ticket))
        return await asyncio.wrap_future(future)

    async def _wait_for_worker(self, ticket: Ticket) -> None:
        """A turn for ``ticket``; :class:`Overloaded` when displaced or after ``max_wait``."""
        self._metrics.queue_depth.inc()
        try:
            await self.hold(ticket, asyncio.wait_for(self._turns.acquire(ticket.client), self.max_wait))
        except asyncio.TimeoutError:
            raise Overloaded(self.retry_after(), f"no worker was free within {self.max_wait:g} s; "
                                                 "retry later") from None
        finally:
            self._metrics.queue_depth.dec()

    def _finished(self, ticket: Ticket) -> None:
        self._turns.release(ticket.client)
        self._give_back(ticket)

    def shutdown(self) -> None:
        """Waits for running jobs and stops the workers."""
        self._executor.shutdown(wait=True, cancel_futures=True)
