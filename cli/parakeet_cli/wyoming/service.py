"""The service: one loaded model, the worker threads that run it, and the listening socket.

Each connection gets a :class:`~.handler.SttHandler`. The library calls of every client
(stream feeds, final transcriptions) run on ``concurrency`` worker threads, as many as the
model's pool has backends, in the order they come: no call waits inside the library for a
backend, and what a client sends while its call waits stays in its socket (backpressure).

With ``--max-batch`` > 1 the live streams of all clients join one stream
group (../stream_batching.py, as parakeet-server's do): a member's feed waits in the library for
a batch, so the feeds run on threads of their own, as many as a batch holds, and fill batches
while the workers run the final transcriptions. A stream leaves the group when it is freed.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, List, Optional, Set, TypeVar
from urllib.parse import urlparse

from parakeet_py import StreamGroup

from .discovery import Announcement
from .events import MAX_LINE_BYTES
from .handler import SttHandler
from .utterance import Settings

T = TypeVar("T")
LOG = logging.getLogger("parakeet.wyoming")


@dataclass
class Service:
    context: Any
    settings: Settings
    info_event: Any  # the ``info`` event answering ``describe``
    locales: List[str]  # a prompt model's locales ([]: the model takes no language)
    default_language: Optional[str]  # the locale when a client names none
    group: Optional[StreamGroup] = None  # the live streams' stream group (None: they do not batch)
    utterances_open: int = 0  # touched on the event loop only

    def __post_init__(self) -> None:
        self._workers = ThreadPoolExecutor(max_workers=max(1, int(self.context.concurrency)),
                                           thread_name_prefix="parakeet-wyoming")
        self._feeders = self._workers if self.group is None else ThreadPoolExecutor(
            max_workers=self.group.max_batch, thread_name_prefix="parakeet-wyoming-feed")

    @property
    def streaming(self) -> bool:
        """Whether utterances get live text (transcript-start/-chunk/-stop)."""
        return self.settings.window is not None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self._workers, fn, *args)

    async def feed(self, fn: Callable[..., T], *args: Any) -> T:
        """A live stream's feed ``fn(*args)``: on a feeder thread when the streams batch."""
        return await asyncio.get_running_loop().run_in_executor(self._feeders, fn, *args)

    def close_later(self, fn: Callable[[], Any]) -> None:
        """``fn()`` on a worker thread, not waited for (safe while a handler is cancelled)."""
        self._workers.submit(fn)

    def shutdown(self) -> None:
        self._feeders.shutdown(wait=True)
        self._workers.shutdown(wait=True)
        if self.group is not None:
            stats = self.group.stats()
            LOG.info("stream group: %d batches; batch_sizes (index i: batches of i + 1 streams): %s",
                     stats["batches"], stats["batch_sizes"])
            self.group.close()


async def serve(service: Service, uri: str, ready: Callable[[str], None], zeroconf: Optional[str] = None) -> None:
    """Listens on ``uri`` (tcp://HOST:PORT, port 0 picks one; unix://PATH) until SIGINT or
    SIGTERM; ``ready`` gets the address actually listened on. ``zeroconf``: the name to
    announce a tcp:// service by over mDNS (discovery.py)."""
    parsed = urlparse(uri)
    if zeroconf is not None and parsed.scheme != "tcp":
        raise ValueError(f"{uri}: --zeroconf announces tcp:// services only")
    handlers: Set["asyncio.Task[Any]"] = set()

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        try:
            await SttHandler(service, reader, writer).run()
        finally:
            handlers.discard(task)

    if parsed.scheme == "tcp":
        if not parsed.hostname or parsed.port is None:
            raise ValueError(f"{uri}: a tcp:// URI needs a host and a port, e.g. tcp://0.0.0.0:10300")
        server = await asyncio.start_server(connected, parsed.hostname, parsed.port, limit=MAX_LINE_BYTES)
        host, port = server.sockets[0].getsockname()[:2]
        address = f"tcp://{host}:{port}"
    elif parsed.scheme == "unix":
        if not parsed.path:
            raise ValueError(f"{uri}: a unix:// URI needs a path, e.g. unix:///run/parakeet.sock")
        server = await asyncio.start_unix_server(connected, parsed.path, limit=MAX_LINE_BYTES)
        address = f"unix://{parsed.path}"
    else:
        raise ValueError(f"{uri}: use tcp://HOST:PORT or unix://PATH")
    announcement = None
    if zeroconf is not None:
        try:
            announcement = await Announcement.start(zeroconf, parsed.hostname or "", port)
        except BaseException:
            server.close()
            raise
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    ready(address + (f", announced over mDNS as {zeroconf!r}" if announcement else ""))
    try:
        await stop.wait()
    finally:
        if announcement is not None:
            await announcement.stop()
        server.close()
        for task in list(handlers):  # each frees its utterance as it ends
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        if parsed.scheme == "unix":
            Path(parsed.path).unlink(missing_ok=True)
    LOG.info("stopped")
