"""Request batching of uploads (``--upload-batch``; the library's "Request batching",
docs/api.md): uploads on /v1/audio/transcriptions that run at the same time on one model gather
into batches that share one encoder pass and one greedy decode, each transcript bitwise the one
alone. What the batcher did is exported to ``/metrics``.

A batch runs on one backend, so with batching a backend serves up to ``--upload-batch`` uploads
at once, and the next batch gathers while it runs: the transcription queue gets twice that many
workers (and turns, turns.py) per backend. A
lone upload runs at once; with a backend free an upload waits at most ``--batch-wait-ms`` for
others, and those that come while every backend is busy wait in the library for the next
batch. Uploads the library does not batch (beam search, VAD-cut, diarized, over 30 s) run
alone on their worker.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry

from .batching import batch_families
from .limits import DEFAULT_BATCH_WAIT_MS


def enable(context: Any, upload_batch: int, wait_ms: Optional[int]) -> int:
    """Turns request batching on for ``context`` when ``upload_batch`` > 1; returns the workers
    of one backend (the uploads it holds at once, running or gathering). ``wait_ms`` None: DEFAULT_BATCH_WAIT_MS, what the
    upload figures were measured with (whatever the model's live streams default to)."""
    if upload_batch <= 1:
        return 1
    context.set_request_batching(upload_batch, DEFAULT_BATCH_WAIT_MS if wait_ms is None else wait_ms)
    # Two batches' worth of workers: while one batch runs, the next gathers in the library.
    # With only one, every worker comes back from a batch at once, and the first upload any
    # of them reads finds no other in flight and runs alone (a lone upload runs at once).
    return 2 * upload_batch


class UploadBatchCollector(Collector):
    """Reads the context's request-batching counters at every scrape."""

    def __init__(self, context: Any) -> None:
        self._context = context

    def collect(self) -> Iterator[Any]:
        if self._context.closed:
            return
        stats = self._context.request_batching_stats()
        yield from batch_families(stats, "upload", (
            "Uploads in each batched transcription (one encoder pass and greedy decode).",
            "How long each upload waited for its batch to start.",
            "The longest an upload waited for its batch."))
        yield CounterMetricFamily("parakeet_upload_unbatched", "Uploads transcribed alone (beam search, over 30 s).",
                                  value=stats["unbatched"])


def register(context: Any, upload_batch: int, registry: CollectorRegistry) -> None:
    if upload_batch > 1:
        registry.register(UploadBatchCollector(context))
