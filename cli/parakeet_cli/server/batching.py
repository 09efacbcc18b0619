"""What the library's batchers did, exported to ``/metrics``: the server's stream group (the live
streams of the model share their encoder passes: the steps of a cache-aware model, the buffered
windows of an offline one; ``--max-batch``, ``--batch-wait-ms``; the library's "Stream groups",
docs/api.md) and the request batching of uploads (``--upload-batch``: upload_batching.py).

There is one group per server, so every SSE stream and realtime session batches with every
other. Which models get a group, and what a member's feed takes at a time:
../stream_batching.py (shared with ``parakeet-cli wyoming``).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, Tuple

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


def batch_families(stats: dict, name: str, helps: Tuple[str, str, str]) -> Iterator[Any]:
    """The batch-size histogram ``parakeet_<name>_batch_size``, the queue-wait summary
    ``parakeet_<name>_batch_wait_seconds`` and its maximum ``parakeet_<name>_batch_wait_max_seconds``
    (their help texts: ``helps``), from a batcher's stats (the library's JSON: batch_sizes,
    batches, waited_ms_mean, waited_ms_max)."""
    sizes = stats["batch_sizes"]  # sizes[i]: batches of i + 1 members
    members = sum((i + 1) * n for i, n in enumerate(sizes))
    buckets = [(str(bound), float(sum(sizes[:bound]))) for bound in _size_buckets(len(sizes))]
    yield HistogramMetricFamily(f"parakeet_{name}_batch_size", helps[0],
                                buckets=buckets + [("+Inf", float(stats["batches"]))], sum_value=float(members))
    yield SummaryMetricFamily(f"parakeet_{name}_batch_wait_seconds", helps[1],
                              count_value=members, sum_value=stats["waited_ms_mean"] * members / 1e3)
    yield GaugeMetricFamily(f"parakeet_{name}_batch_wait_max_seconds", helps[2], value=stats["waited_ms_max"] / 1e3)


class GroupCollector(Collector):
    """Reads the group's counters (``StreamGroup.stats``) at every scrape."""

    def __init__(self, group: StreamGroup) -> None:
        self._group = group

    def collect(self) -> Iterator[Any]:
        if self._group.closed:
            return
        stats = self._group.stats()
        yield from batch_families(stats, "stream", (
            "Streams in each batched encoder pass of the live streams.",
            "How long each stream's ready chunk waited for its batch to start.",
            "The longest a ready chunk waited for its batch."))
        yield GaugeMetricFamily("parakeet_stream_group_members", "Live streams in the stream group now.",
                                value=stats["members"])


def register(group: Optional[StreamGroup], registry: CollectorRegistry) -> None:
    if group is not None:
        registry.register(GroupCollector(group))
