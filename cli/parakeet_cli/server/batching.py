"""The server's stream group: the live streams of the model share their encoder passes
(``--max-batch``, ``--batch-wait-ms``; the library's "Stream groups", docs/api.md): the steps of
a cache-aware model, the buffered windows of an offline one. What the group did is exported to
``/metrics``.

There is one group per server, so every SSE stream and realtime session batches with every
other. Which models get a group, and what a member's feed takes at a time:
../stream_batching.py (shared with ``parakeet-cli wyoming``).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, SummaryMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry

from parakeet_py import StreamGroup


def _size_buckets(max_batch: int) -> list:
    """Batch-size bucket bounds: 1, 2, 4, ... up to ``max_batch`` (which is one too)."""
    bounds, b = [], 1
    while b < max_batch:
        bounds.append(b)
        b *= 2
    return bounds + [max_batch]


class GroupCollector(Collector):
    """Reads the group's counters (``StreamGroup.stats``) at every scrape."""

    def __init__(self, group: StreamGroup) -> None:
        self._group = group

    def collect(self) -> Iterator[Any]:
        if self._group.closed:
            return
        stats = self._group.stats()
        sizes = stats["batch_sizes"]  # sizes[i]: batches of i + 1 streams
        chunks = sum((i + 1) * n for i, n in enumerate(sizes))
        buckets = [(str(bound), float(sum(sizes[:bound]))) for bound in _size_buckets(len(sizes))]
        yield HistogramMetricFamily("parakeet_stream_batch_size",
                                    "Streams in each batched encoder pass of the live streams.",
                                    buckets=buckets + [("+Inf", float(stats["batches"]))], sum_value=float(chunks))
        yield SummaryMetricFamily("parakeet_stream_batch_wait_seconds",
                                  "How long each stream's ready chunk waited for its batch to start.",
                                  count_value=chunks, sum_value=stats["waited_ms_mean"] * chunks / 1e3)
        yield GaugeMetricFamily("parakeet_stream_batch_wait_max_seconds",
                                "The longest a ready chunk waited for its batch.", value=stats["waited_ms_max"] / 1e3)
        yield GaugeMetricFamily("parakeet_stream_group_members", "Live streams in the stream group now.",
                                value=stats["members"])


def register(group: Optional[StreamGroup], registry: CollectorRegistry) -> None:
    if group is not None:
        registry.register(GroupCollector(group))
