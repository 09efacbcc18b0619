"""Admission control and the worker threads that run transcriptions.

At most ``workers`` jobs run at once (one per backend of the Context: the binding releases
the GIL, so they truly run in parallel) and at most ``max_waiting`` more wait for a worker.
A request beyond that is refused at once (:class:`Overloaded`, answered 503 with
Retry-After) instead of piling up: a client is better served by a quick "try again" than
by a queue that grows until every request times out.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

from .metrics import Metrics

T = TypeVar("T")

# Weight of the newest job in the moving average of job times used for Retry-After.
_EWMA_WEIGHT = 0.2
MAX_RETRY_AFTER_SEC = 60


class Overloaded(Exception):
    """Every worker is busy and the waiting room is full."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


class TranscriptionQueue:
    def __init__(self, workers: int, max_waiting: int, metrics: Metrics) -> None:
        self.workers = workers
        self.max_waiting = max_waiting
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

    async def run(self, job: Callable[[], T]) -> T:
        """Runs ``job`` on a worker thread, or raises :class:`Overloaded` at once."""
        if self._admitted >= self.workers + self.max_waiting:
            raise Overloaded(self.retry_after())
        self._admitted += 1
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
        future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._release, started))
        return await asyncio.wrap_future(future)

    def _release(self, started: list) -> None:
        self._admitted -= 1
        if not started[0]:  # cancelled before a worker picked it up
            self._metrics.queue_depth.dec()

    def shutdown(self) -> None:
        """Waits for running jobs and stops the workers."""
        self._executor.shutdown(wait=True, cancel_futures=True)
