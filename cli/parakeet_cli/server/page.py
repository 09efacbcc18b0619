"""The page at ``/``: a file upload and the microphone, in plain HTML and JavaScript (``static/``).

The page and its files load without the API key (the page asks for it and sends it with every
request it makes). The page is served with a strict Content-Security-Policy: its own scripts,
styles and worklet only, no inline script, and connections only back to this server. CSP's
``'self'`` covers ``ws:`` to the same host in current browsers but not in older ones (CSP
level 2 and Safari before 15.4), so the WebSocket origin of the request's own host is named too.
"""

from __future__ import annotations

import re
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).with_name("static")
# A Host header that can go into the policy as it is: a name or address and a port, nothing
# that could end a directive (the Host check in origins.py may be off: --trusted-host '*').
_PLAIN_HOST = re.compile(r"^[A-Za-z0-9.\-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$")


def content_security_policy(host: str) -> str:
    sockets = f" ws://{host} wss://{host}" if _PLAIN_HOST.match(host) else ""
    return ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            f"connect-src 'self'{sockets}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


async def index(request: Request) -> Response:
    headers = {"Content-Security-Policy": content_security_policy(request.headers.get("host", "")),
               "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
               "Cache-Control": "no-cache"}
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8", headers=headers)


def routes() -> list:
    return [Route("/", index, methods=["GET", "HEAD"]), Mount("/static", StaticFiles(directory=STATIC), name="static")]
