"""Live streams of the server (SSE transcriptions and realtime sessions): admission, the
threads their feeds run on, and what each feed reports to the metrics.

At most ``max_streams`` streams are open at once, and one client (IP address) holds at most
its share of them; one more is refused at once (the caller answers 503 or an error event)
rather than queued. A stream holds no backend between feeds
(the library lends one per chunk), so many more streams than backends stay live; each feed
runs on one of ``max_streams`` threads, so a feed never waits for a thread, only for a turn on
the backends (turns.py: shared with the transcription queue, handed out client by client, so
one client's streams cannot keep the backends from everyone else). A stream's feeds run one
after the other: its connection awaits each before reading more, so what a client sends
beyond that waits in the socket (backpressure), not in a queue here.

With a stream group (../stream_batching.py; cache-aware and buffered streams alike) the streams
join it, and their feeds take no turn: a turn per feed would let at most K feeds reach the group, so no batch would hold
more than K chunks. The group is the fair share there: its batches take the waiting chunks
oldest first, a chunk waits at most the batch wait, and each feed is one chunk (so a client
sending a minute at once takes one chunk per batch, like everyone else). A batch leases a
backend from the library, first come, first served with the queue's transcriptions.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple, TypeVar

import numpy as np

from parakeet_py import Stream, StreamGroup, StreamUpdate

from ..stream_batching import chunk_samples, is_cache_aware
from .clients import Shares, share_limit
from .metrics import Metrics
from .turns import FairTurns

T = TypeVar("T")

# Audio fed in one backend turn by a stream without a chunk setting (a cache-aware model's
# chunks are shorter than this).
TURN_AUDIO_SECONDS = 1.0

#: (left, chunk, right) seconds, the order NeMo's script names them in ("10-2-2").
Window = Tuple[float, float, float]


@dataclass
class Lease:
    """One admitted stream; :meth:`LiveStreams.end` closes its library stream and frees the slot."""

    kind: str
    stream: Optional[Stream] = None
    ended: bool = False
    client: str = ""
    # Samples per feed of a stream in the group (0: not in it; feeds then take turns).
    batched_piece: int = 0


class LiveStreams:
    def __init__(self, context: Any, max_streams: int, metrics: Metrics, client_share: float = 1.0,
                 turns: Optional[FairTurns] = None, group: Optional[StreamGroup] = None,
                 att_context: Optional[Tuple[int, int]] = None) -> None:
        self.context = context
        self.att_context = att_context  # a cache-aware model's streams' context (None: its first)
        self.group = group
        self._turns = turns if turns is not None else FairTurns(int(context.concurrency))
        self.max_streams = max_streams
        self._shares = Shares(share_limit(max_streams, client_share))
        self._metrics = metrics
        self._open = 0  # touched on the event loop thread only
        self._executor = ThreadPoolExecutor(max_workers=max(1, max_streams), thread_name_prefix="parakeet-stream")
        metrics.max_streams.set(max_streams)

    @property
    def open(self) -> int:
        return self._open

    def admit(self, kind: str, client: str = "") -> Optional[Lease]:
        """A lease, or None when ``max_streams`` are open or ``client`` holds its share of them
        (counted as refused; :meth:`refusal` says which)."""
        if self._open >= self.max_streams or not self._shares.take(client):
            self._metrics.streams_refused.labels(kind).inc()
            return None
        self._open += 1
        self._metrics.live_streams.labels(kind).inc()
        self._metrics.streams.labels(kind).inc()
        return Lease(kind, client=client)

    def refusal(self, client: str) -> str:
        """Why :meth:`admit` refused ``client`` just now."""
        if self._open >= self.max_streams:
            return f"the server is at its limit of {self.max_streams} live streams; retry later"
        return (f"this client holds its share of the live streams ({self._shares.limit} of {self.max_streams}); "
                "close one or retry later")

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a stream thread (blocking work: decoding, the library)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def compute(self, lease: Lease, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a stream thread in a backend turn of the lease's client (work on a
        model other than the stream's own: a realtime session's diarizer)."""
        return await self._turns.run(self._executor, lease.client, fn, *args)

    def close_later(self, close: Callable[[], Any]) -> None:
        """Runs ``close`` on a stream thread (never blocks: a close that waits for a call still
        running on its handle waits there)."""
        self._executor.submit(close)

    async def begin(self, lease: Lease, window: Window, sample_rate: int, language: Optional[str] = None) -> Stream:
        """Opens the lease's library stream (replacing one already open); ``language``: a prompt
        model's locale (others ignore it)."""
        left, chunk, right = window
        if is_cache_aware(self.context):
            # a cache-aware model streams in its attention context's chunks, not windows
            stream = await self.run(lambda: self.context.stream(att_context=self.att_context, sample_rate=sample_rate,
                                                                language=language))
        else:
            stream = await self.run(lambda: self.context.stream(chunk, left, right, sample_rate=sample_rate,
                                                                language=language))
        self.close_stream(lease)
        lease.stream = stream
        lease.batched_piece = 0
        if self.group is not None:
            await self.run(self.group.join, stream)  # it leaves when it is closed
            lease.batched_piece = chunk_samples(self.context, stream.settings, stream.sample_rate)
        return stream

    async def feed(self, lease: Lease, samples: Optional[np.ndarray]) -> StreamUpdate:
        """Feeds ``samples`` (None: finalize) and times it from now, when the audio has arrived."""
        stream = lease.stream
        assert stream is not None
        arrived = time.perf_counter()
        before = stream.chunks
        if samples is None:
            update = await self._call(lease, stream.finalize)
        else:
            # One call per chunk of audio, not per feed: a turn (or a batch) is what other
            # clients wait for (a 10 s piece of a realtime append is 5 chunks of 14 s of encoder
            # input each).
            step = lease.batched_piece or max(1, int(stream.settings.get("chunk", TURN_AUDIO_SECONDS)
                                                     * stream.sample_rate))
            update = StreamUpdate()
            for begin in range(0, max(samples.shape[0], 1), step):
                update = update.then(await self._call(lease, stream.feed, samples[begin:begin + step]))
            self._metrics.stream_audio_seconds.inc(samples.shape[0] / stream.sample_rate)
        if update.chunks > before:
            self._metrics.chunk_latency.labels(lease.kind).observe(time.perf_counter() - arrived)
        return update

    async def _call(self, lease: Lease, fn: Callable[..., T], *args: Any) -> T:
        """A feed or finalize of the lease's stream: through the group (no turn), or in a turn."""
        if lease.batched_piece:
            return await self.run(fn, *args)
        return await self._turns.run(self._executor, lease.client, fn, *args)

    def close_stream(self, lease: Lease) -> None:
        """Frees the lease's library stream once a feed running on it is over (never blocks)."""
        stream, lease.stream = lease.stream, None
        if stream is not None:
            self.close_later(stream.close)

    def end(self, lease: Lease) -> None:
        """Closes the lease's stream and gives its slot back. Idempotent; never blocks (safe in
        the ``finally`` of a cancelled handler)."""
        if lease.ended:
            return
        lease.ended = True
        self.close_stream(lease)
        self._open -= 1
        self._shares.give_back(lease.client)
        self._metrics.live_streams.labels(lease.kind).dec()

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=False)
        if self.group is not None:
            self.group.close()
