"""Reading Wyoming events off a socket without ending the connection over a bad one.

The ``wyoming`` package's reader returns None both at the end of the stream and for a line it
cannot parse, so a server built on it hangs up on a typo. Here a header line that is not a
JSON object with a string ``type`` raises :class:`BadEvent`; the next line is a fresh event, so
the connection goes on. Only lengths that cannot be trusted (``data_length`` or
``payload_length`` not a whole number in range) lose the framing: :class:`LostFraming`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Optional

from wyoming.event import Event

# The longest header line (the reader's limit: service.py opens sockets with it), extra data
# and payload one event may carry (an audio chunk is
# usually a few KiB; a whole minute of 48 kHz stereo 32-bit audio is 22 MiB).
MAX_LINE_BYTES = 1 << 20
MAX_DATA_BYTES = 1 << 20
MAX_PAYLOAD_BYTES = 32 << 20


class BadEvent(ValueError):
    """An event the service cannot read; the connection can go on with the next one."""


class LostFraming(BadEvent):
    """An event whose declared lengths are unusable: where the next event starts is unknown."""


async def read_event(reader: asyncio.StreamReader) -> Optional[Event]:
    """The next event, or None at the end of the stream."""
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as e:
        if e.partial.strip():
            raise LostFraming("the connection ended inside an event's header line") from e
        return None
    except asyncio.LimitOverrunError as e:
        raise LostFraming(f"an event's header line is longer than {MAX_LINE_BYTES} bytes") from e
    try:
        header = json.loads(line)
    except ValueError as e:
        raise BadEvent(f"an event's header line is not JSON: {e}") from e
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise BadEvent("an event's header must be a JSON object with a string 'type'")
    data = header.get("data") or {}
    data_length = _length(header, "data_length", MAX_DATA_BYTES)
    payload_length = _length(header, "payload_length", MAX_PAYLOAD_BYTES)
    extra = await _read_exactly(reader, data_length)
    payload = await _read_exactly(reader, payload_length) if payload_length else None
    if extra:
        try:
            more = json.loads(extra)
        except ValueError as e:
            raise BadEvent(f"{header['type']}: its data is not JSON: {e}") from e
        if not isinstance(more, dict) or not isinstance(data, dict):
            raise BadEvent(f"{header['type']}: its data must be a JSON object")
        data = {**data, **more}
    if not isinstance(data, dict):
        raise BadEvent(f"{header['type']}: its data must be a JSON object")
    return Event(type=header["type"], data=data, payload=payload)


def _length(header: dict, key: str, limit: int) -> int:
    value = header.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise LostFraming(f"{header['type']}: '{key}' must be a whole number in 0..{limit}, not {value!r}")
    return value


async def _read_exactly(reader: asyncio.StreamReader, n: int) -> bytes:
    if not n:
        return b""
    try:
        return await reader.readexactly(n)
    except asyncio.IncompleteReadError as e:
        raise LostFraming(f"the connection ended {n - len(e.partial)} bytes short of an event") from e
