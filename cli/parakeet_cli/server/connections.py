"""Connections: how many are open, per client and in all, and how long a request may take to
arrive. Below the ASGI application (the application only sees requests whose head is whole),
as a subclass of uvicorn's h11 protocol.

Without these, 2,000 sockets trickling a byte every 10 s are held forever: uvicorn has no
timeout for a request's head or body, only for idle keep-alive connections. Here:

* a connection over ``max_connections``, or over ``max_per_client`` from one IP address, is
  answered 503 and closed at once, before anything is read from it;
* a request's head (request line and headers) must be whole within ``header_timeout`` seconds
  of its first byte (of the connection, for the first request); otherwise the connection is
  closed;
* its body must be whole within ``body_timeout`` seconds of the head; otherwise it is answered
  408 (when no answer has begun) and the connection is closed.

A WebSocket handshake is a request head like any other; once upgraded, the session's own
limits apply (realtime.py).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Set

from uvicorn.protocols.http.h11_impl import H11Protocol


@dataclass
class ConnectionLimits:
    max_connections: int
    max_per_client: int
    header_timeout: float
    body_timeout: float
    # Open transports by client IP. A transport that was upgraded to a WebSocket leaves this
    # protocol without a connection_lost here, so closed transports are swept out on admission.
    open: Dict[str, Set[Any]] = field(default_factory=dict)

    def admit(self, client: str, transport: Any) -> bool:
        for key in list(self.open):
            live = {t for t in self.open[key] if not t.is_closing()}
            if live:
                self.open[key] = live
            else:
                del self.open[key]
        total = sum(len(ts) for ts in self.open.values())
        mine = self.open.setdefault(client, set())
        if total >= self.max_connections or len(mine) >= self.max_per_client:
            if not mine:
                del self.open[client]
            return False
        mine.add(transport)
        return True

    def forget(self, client: str, transport: Any) -> None:
        mine = self.open.get(client)
        if mine is not None:
            mine.discard(transport)
            if not mine:
                del self.open[client]


def _raw_response(status: str, code: str, message: str, extra: str = "") -> bytes:
    body = json.dumps({"error": {"message": message, "type": "server_error" if status.startswith("5") else
                                 "invalid_request_error", "param": None, "code": code}}).encode()
    head = (f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            f"connection: close\r\n{extra}\r\n")
    return head.encode() + body


def guarded_protocol(limits: ConnectionLimits) -> type:
    """uvicorn's h11 protocol with ``limits`` (pass it as uvicorn's ``http``)."""

    class GuardedH11Protocol(H11Protocol):
        _timer: Optional[asyncio.TimerHandle] = None
        _timed_cycle: Any = None
        _admitted = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._client_ip = self.client[0] if self.client else "unknown"
            if not limits.admit(self._client_ip, transport):
                transport.write(_raw_response("503 Service Unavailable", "too_many_connections",
                                              "this server (or this client) has too many connections open; "
                                              "retry later", "retry-after: 1\r\n"))
                transport.close()
                return
            self._admitted = True
            self._arm(None, limits.header_timeout, self._head_late)

        def connection_lost(self, exc: Optional[Exception]) -> None:
            self._disarm()
            if self._admitted:
                limits.forget(self._client_ip, self.transport)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._timer is None and (self.cycle is None or self.cycle.response_complete):
                self._arm(self.cycle, limits.header_timeout, self._head_late)  # the next request's head
            super().data_received(data)
            self._watch()

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._disarm()  # the WebSocket protocol owns the connection from here
            self._upgraded = True
            super().handle_websocket_upgrade(event)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()

        # -- the timers ------------------------------------------------------------------------
        def _watch(self) -> None:
            """After the parser ran: a new request's head is whole → time its body instead."""
            if getattr(self, "_upgraded", False) or self.transport.is_closing():
                return
            cycle = self.cycle
            if cycle is not None and cycle is not self._timed_cycle:
                if cycle.more_body:
                    self._arm(cycle, limits.body_timeout, self._body_late)
                else:
                    self._disarm()
            elif cycle is not None and self._timer is not None and self._timed_kind == "body" and not cycle.more_body:
                self._disarm()

        def _arm(self, cycle: Any, seconds: float, fire: Any) -> None:
            self._disarm()
            self._timed_cycle = cycle
            self._timed_kind = "body" if fire == self._body_late else "head"
            self._timer = self.loop.call_later(seconds, fire)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _head_late(self) -> None:
            self._timer = None
            if self.cycle is self._timed_cycle:  # no new request began: its head is still arriving
                self.transport.close()

        def _body_late(self) -> None:
            self._timer = None
            cycle = self.cycle
            if cycle is self._timed_cycle and cycle is not None and cycle.more_body:
                if not cycle.response_started:
                    self.transport.write(_raw_response(
                        "408 Request Timeout", "body_timeout",
                        f"the request body did not arrive within {limits.body_timeout:g} s"))
                cycle.disconnected = True
                cycle.message_event.set()  # the application sees the client gone
                self.transport.close()

    return GuardedH11Protocol
