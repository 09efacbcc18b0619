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
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Optional, TypeVar

from .clients import Shares, share_limit
from .metrics import Metrics

T = TypeVar("T")

# Weight of the newest job in the moving average of job times used for Retry-After.
_EWMA_WEIGHT = 0.2
MAX_RETRY_AFTER_SEC = 60


class Overloaded(Exception):
    """Every worker is busy and the waiting room is full, or the client holds its share."""

    def __init__(self, retry_after: int, reason: str = "") -> None:
        super().__init__(reason or f"retry after {retry_after} s")
        self.retry_after = retry_after
        self.reason = reason


@dataclass
class Ticket:
    """A place in the queue, from before the body is read until the job is over."""

    client: str
    running: bool = False  # handed to run(), which gives the place back when the job ends
    released: bool = False


class TranscriptionQueue:
    def __init__(self, workers: int, max_waiting: int, metrics: Metrics, client_share: float = 1.0) -> None:
        self.workers = workers
        self.max_waiting = max_waiting
        self._shares = Shares(share_limit(workers + max_waiting, client_share))
        self._metrics = metrics
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="parakeet-worker")
        # Admitted jobs not yet finished. Only touched on the event loop thread (admission
        # and release both happen there), so it needs no lock.
        self._admitted = 0
        self._lock = threading.Lock()  # guards _job_sec, updated from worker threads
        self._job_sec = 1.0

    @property
    def admitted(self) -> int:
        return self._admitted

    def retry_after(self) -> int:
        """Seconds until a worker is likely free: the queue ahead, drained K at a time."""
        with self._lock:
            job = self._job_sec
        rounds = (self._admitted - self.workers) / self.workers + 1
        return max(1, min(MAX_RETRY_AFTER_SEC, math.ceil(job * max(rounds, 1))))

    def reserve(self, client: str = "") -> Ticket:
        """A place for ``client``'s request, or :class:`Overloaded` at once."""
        if self._admitted >= self.workers + self.max_waiting:
            raise Overloaded(self.retry_after())
        if not self._shares.take(client):
            raise Overloaded(self.retry_after(), f"this client holds its share of the queue ({self._shares.limit} "
                                                 f"of {self.workers + self.max_waiting} requests); retry later")
        self._admitted += 1
        return Ticket(client)

    def release(self, ticket: Ticket) -> None:
        """Gives back a place that was not handed to :meth:`run` (idempotent)."""
        if ticket.running or ticket.released:
            return
        ticket.released = True
        self._admitted -= 1
        self._shares.give_back(ticket.client)

    async def run(self, job: Callable[[], T], ticket: Optional[Ticket] = None) -> T:
        """Runs ``job`` on a worker thread in ``ticket``'s place (None: takes one now, or raises
        :class:`Overloaded` at once)."""
        ticket = self.reserve() if ticket is None else ticket
        assert not ticket.running and not ticket.released
        ticket.running = True
        self._metrics.queue_depth.inc()
        started = [False]

        def on_worker() -> T:
            started[0] = True
            self._metrics.queue_depth.dec()
            t0 = time.perf_counter()
            try:
                return job()
            finally:
                dt = time.perf_counter() - t0
                with self._lock:
                    self._job_sec += _EWMA_WEIGHT * (dt - self._job_sec)

        loop = asyncio.get_running_loop()
        future = self._executor.submit(on_worker)
        # Released when the job is really over (not when an awaiting request is cancelled:
        # a running job still holds its worker).
        future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._finished, ticket, started))
        return await asyncio.wrap_future(future)

    def _finished(self, ticket: Ticket, started: list) -> None:
        ticket.released = True
        self._admitted -= 1
        self._shares.give_back(ticket.client)
        if not started[0]:  # cancelled before a worker picked it up
            self._metrics.queue_depth.dec()

    def shutdown(self) -> None:
        """Waits for running jobs and stops the workers."""
        self._executor.shutdown(wait=True, cancel_futures=True)
