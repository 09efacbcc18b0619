"""Which hosts and web origins may use the server: a pure ASGI middleware.

Without an API key, any web page a user opens could drive ``ws://127.0.0.1:8000/v1/realtime``
(browsers let pages open WebSockets to any address, sending the page's ``Origin``) or, by DNS
rebinding (a name of the attacker's that resolves to 127.0.0.1), read the server's answers as
its own origin. So:

* the ``Host`` header must name a trusted host (default: loopback names; add the names clients
  use with ``--trusted-host``, or ``*``), otherwise 400 ``invalid_host``, which defeats DNS
  rebinding: the rebound request carries the attacker's name;
* a request that carries an ``Origin`` (browsers send it on WebSockets and cross-origin
  requests; other clients do not) must come from an allowed origin (default: pages served by
  loopback, any port; add with ``--allowed-origin``, or ``*``), otherwise 403
  ``origin_not_allowed``. A refused WebSocket is closed before it is accepted: HTTP 403.
"""

from __future__ import annotations

from typing import Iterable, Optional, Tuple
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from .errors import error_response


def _host_of(value: str) -> str:
    """``example.com:8000`` → ``example.com``; ``[::1]:8000`` → ``::1`` (lower case)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _origin(value: str) -> Optional[Tuple[str, str, Optional[int]]]:
    try:
        parts = urlsplit(value.strip().lower())
        return parts.scheme, parts.hostname or "", parts.port
    except ValueError:
        return None


class HostOriginGuard:
    def __init__(self, app: ASGIApp, trusted_hosts: Iterable[str], allowed_origins: Iterable[str]) -> None:
        self.app = app
        self.hosts = {_host_of(h) for h in trusted_hosts}
        self.any_host = "*" in self.hosts
        self.any_origin = "*" in set(allowed_origins)
        # An allowed origin without a port allows every port of its scheme and host.
        self.origins = [o for o in (_origin(v) for v in allowed_origins if v != "*") if o is not None]

    def host_ok(self, host: str) -> bool:
        return self.any_host or _host_of(host) in self.hosts

    def origin_ok(self, origin: str) -> bool:
        if self.any_origin:
            return True
        given = _origin(origin)
        return given is not None and any(given[:2] == o[:2] and o[2] in (None, given[2]) for o in self.origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        problem = None
        if not self.host_ok(headers.get("host", "")):
            problem = (400, f"the Host header {headers.get('host', '')[:100]!r} is not one this server answers to "
                            "(see --trusted-host)", "invalid_host")
        elif "origin" in headers and not self.origin_ok(headers["origin"]):
            problem = (403, f"requests from the web origin {headers['origin'][:100]!r} are not allowed "
                            "(see --allowed-origin)", "origin_not_allowed")
        if problem is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: the client gets HTTP 403
        else:
            await error_response(problem[0], problem[1], code=problem[2])(scope, receive, send)
