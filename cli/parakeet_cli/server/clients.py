"""Who a request comes from, and each client's share of a limited pool of slots.

The server's slots (the transcription queue, the live streams, connections) are few. Without a
share, one client that opens them all (16 realtime sessions sending a ``clear`` now and then)
locks every other client out. A client is its IP address: an API key cannot tell clients apart
on a server with one key, and behind a reverse proxy every client is the proxy (give the proxy
its own limits then).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any


def client_key(connection: Any) -> str:
    """The client's IP address of a starlette Request or WebSocket (or an ASGI scope)."""
    scope = connection if isinstance(connection, dict) else connection.scope
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def share_limit(capacity: int, share: float) -> int:
    """Slots one client may hold out of ``capacity``: ``share`` of them, at least one."""
    return max(1, math.ceil(capacity * share - 1e-9))


class Shares:
    """Slots held per client; touched on the event loop thread only (no lock)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: Counter = Counter()

    def take(self, client: str) -> bool:
        """Takes a slot for ``client``; False when it holds its share already."""
        if self._held[client] >= self.limit:
            return False
        self._held[client] += 1
        return True

    def held(self, client: str) -> int:
        return self._held.get(client, 0)

    def give_back(self, client: str) -> None:
        self._held[client] -= 1
        if self._held[client] <= 0:
            del self._held[client]
