"""The stream group of a service's live streams (the library's "Stream groups", docs/api.md):
which models get one, and how much audio a member's feed takes at a time. parakeet-server
(server/batching.py, server/live.py) and ``parakeet-cli wyoming`` both use it.

Both kinds of live stream batch: a cache-aware model's steps and an offline model's buffered
windows (the model decides the kind). With ``max_batch`` 1 there is no group and feeds run as
before.
"""

from __future__ import annotations

from typing import Any, Optional

from parakeet_py import StreamGroup

from .server.limits import DEFAULT_BATCH_WAIT_MS, DEFAULT_BUFFERED_BATCH_WAIT_MS


def is_cache_aware(context: Any) -> bool:
    return context.info.get("streaming", {}).get("mode") == "cache_aware"


def batch_wait_ms(context: Any, wait_ms: Optional[int]) -> int:
    """``wait_ms``, or when None the default for the model's kind of stream."""
    if wait_ms is not None:
        return wait_ms
    return DEFAULT_BATCH_WAIT_MS if is_cache_aware(context) else DEFAULT_BUFFERED_BATCH_WAIT_MS


def stream_group(context: Any, max_batch: int, wait_ms: Optional[int]) -> Optional[StreamGroup]:
    """The group the live streams of ``context`` join, or None where nothing batches;
    ``wait_ms`` None: the default for the model's kind."""
    if max_batch <= 1:
        return None
    return context.stream_group(max_batch=max_batch, max_wait_ms=batch_wait_ms(context, wait_ms))


def chunk_samples(context: Any, settings: dict, sample_rate: int) -> int:
    """Samples (at ``sample_rate``) of one chunk of a stream with ``settings``: what a batched
    feed takes at a time. A feed returns once every chunk it completed has run, one per batch,
    so a feed of many chunks would wait through as many batches for its text."""
    if "chunk" in settings:  # a buffered stream: its chunk seconds
        return max(1, int(round(settings["chunk"] * sample_rate)))
    left, right = settings["att_context"]
    contexts = context.info["streaming"]["contexts"]
    chunk_ms = next((c["chunk_ms"] for c in contexts if (c["left"], c["right"]) == (left, right)),
                    contexts[0]["chunk_ms"])
    return max(1, int(round(chunk_ms * sample_rate / 1000)))
