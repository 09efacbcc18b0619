"""The stream group of a service's live streams (the library's "Stream groups", docs/api.md):
which models get one, and how much audio a member's feed takes at a time. parakeet-server
(server/batching.py, server/live.py) and ``parakeet-cli wyoming`` both use it.

Buffered streams of offline models are not batched by the library: on such a model (or with
``max_batch`` 1) there is no group and feeds run as before.
"""

from __future__ import annotations

from typing import Any, Optional

from parakeet_py import StreamGroup


def is_cache_aware(context: Any) -> bool:
    return context.info.get("streaming", {}).get("mode") == "cache_aware"


def stream_group(context: Any, max_batch: int, wait_ms: int) -> Optional[StreamGroup]:
    """The group the live streams of ``context`` join, or None where nothing batches."""
    if max_batch <= 1 or not is_cache_aware(context):
        return None
    return context.stream_group(max_batch=max_batch, max_wait_ms=wait_ms)


def chunk_samples(context: Any, settings: dict, sample_rate: int) -> int:
    """Samples (at ``sample_rate``) of one chunk of a cache-aware stream with ``settings``: what
    a batched feed takes at a time. A batch runs every chunk its members have ready before any
    of them returns, so a feed of many chunks would hold the other members' feeds back."""
    left, right = settings["att_context"]
    contexts = context.info["streaming"]["contexts"]
    chunk_ms = next((c["chunk_ms"] for c in contexts if (c["left"], c["right"]) == (left, right)),
                    contexts[0]["chunk_ms"])
    return max(1, int(round(chunk_ms * sample_rate / 1000)))
