"""``/v1/realtime?intent=transcription``: OpenAI's realtime transcription over a WebSocket.

The client sends JSON events; the server answers with OpenAI's. Both dialects the official
``openai`` client speaks are understood:

* beta (``client.beta.realtime``, header ``OpenAI-Beta: realtime=v1``): the server opens with
  ``transcription_session.created``; ``transcription_session.update`` with
  ``input_audio_format: "pcm16"`` (24 kHz), answered ``transcription_session.updated``;
* GA (``client.realtime``): ``session.created``; ``session.update`` with ``session.type:
  "transcription"`` and ``audio.input.format: {"type": "audio/pcm", "rate": 24000}`` (16000 is
  accepted too, an extension), answered ``session.updated``.

Then ``input_audio_buffer.append`` (base64 PCM16 mono little-endian) feeds the current item's
stream (resampled to 16 kHz) and text is sent as it becomes final, as
``conversation.item.input_audio_transcription.delta``; ``input_audio_buffer.commit`` ends the
item: ``input_audio_buffer.committed``, the last delta, then ``...transcription.completed``
with the item's whole transcript. ``input_audio_buffer.clear`` drops the item. Deltas come
while the audio arrives (before the commit, with the item id the commit will carry): that is
the point of streaming. There is no voice activity detection: ``turn_detection`` must be null
(the client commits), and settings the engine cannot honour (noise reduction, logprobs,
g711 audio) are refused with an ``error`` event, as is every malformed event; the session
stays open after an error.

Each event is handled before the next is read, so a client sending faster than the model
decodes is slowed by the socket (the WebSocket's receive queue is bounded) rather than
buffered here; one append is at most ``max_append_bytes``, and JSON and base64 of a large
event are decoded on a stream thread, not on the event loop that serves every connection.
A stream slot is not held for free: a session that sends no audio for ``idle_seconds`` (other
events do not count) is closed, as is one open for ``max_session_seconds``; an item takes at most
``max_audio_seconds`` of audio. A dropped connection frees its stream and slot at once.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import itertools
import json
import logging
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

import numpy as np
from starlette.websockets import WebSocket, WebSocketDisconnect

from parakeet_py import ParakeetError

from .clients import client_key
from .errors import INVALID_REQUEST, SERVER_ERROR, transcription_error
from .live import Lease, LiveStreams, Window
from .metrics import Metrics

log = logging.getLogger("parakeet.server")

# OpenAI's pcm16 is 24 kHz; 16 kHz (the model's own rate) is accepted as an extension.
PCM_RATES = (24000, 16000)
DEFAULT_RATE = 24000
INSECURE_KEY_PROTOCOL = "openai-insecure-api-key."
_LANGUAGE = re.compile(r"^(?:[A-Za-z]{2}|[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})+|auto)$")  # as request_fields
# WebSocket close codes (RFC 6455 / IANA): policy violation, try again later.
CLOSE_POLICY, CLOSE_TRY_LATER = 1008, 1013
# Events larger than this are parsed (JSON, base64) on a stream thread: a 20 MiB append takes
# 50-150 ms to decode. The base64 is decoded in slices, each holding the interpreter lock for a
# millisecond or so, so the event loop serves other connections in between; json.loads holds it
# for its whole parse (about 40 ms for 20 MiB), which a thread cannot split.
OFF_LOOP_CHARS = 64 * 1024
B64_SLICE_CHARS = 1 << 20  # a multiple of 4: every slice but the last decodes on its own
# Longest piece of one append fed to the stream at once.
FEED_PIECE_SECONDS = 10.0


@dataclass(frozen=True)
class RealtimeConfig:
    model_id: str
    api_key: Optional[str]
    window: Window
    idle_seconds: float
    max_append_bytes: int
    max_audio_seconds: float = float("inf")
    max_session_seconds: float = float("inf")

    @classmethod
    def from_server(cls, config: Any) -> "RealtimeConfig":
        return cls(model_id=config.model_id, api_key=config.api_key, window=config.realtime_window,
                   idle_seconds=config.stream_idle_seconds, max_append_bytes=config.max_append_bytes,
                   max_audio_seconds=config.max_audio_seconds, max_session_seconds=config.max_session_seconds)


class EventError(Exception):
    """A client event that cannot be served: answered with an ``error`` event."""

    def __init__(self, message: str, *, code: str, param: Optional[str] = None, type: str = INVALID_REQUEST):
        super().__init__(message)
        self.message, self.code, self.param, self.type = message, code, param, type


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _b64decode(audio: str) -> bytes:
    return b"".join(base64.b64decode(audio[i:i + B64_SLICE_CHARS], validate=True)
                    for i in range(0, len(audio), B64_SLICE_CHARS))


def authorized(websocket: WebSocket, api_key: Optional[str]) -> bool:
    """The key from ``Authorization: Bearer`` or a browser's ``openai-insecure-api-key.KEY``
    subprotocol."""
    if api_key is None:
        return True
    scheme, _, token = websocket.headers.get("authorization", "").partition(" ")
    offered = [p[len(INSECURE_KEY_PROTOCOL):] for p in websocket.scope.get("subprotocols", [])
               if p.startswith(INSECURE_KEY_PROTOCOL)]
    keys = ([token.strip()] if scheme.lower() == "bearer" else []) + offered
    return any(hmac.compare_digest(k.encode(), api_key.encode()) for k in keys if k)


def realtime_endpoint(live: LiveStreams, config: RealtimeConfig, metrics: Metrics) -> Callable[[WebSocket], Any]:
    async def endpoint(websocket: WebSocket) -> None:
        if not authorized(websocket, config.api_key):
            await websocket.close(code=CLOSE_POLICY)  # before accepting: the client gets HTTP 403
            return
        subprotocol = "realtime" if "realtime" in websocket.scope.get("subprotocols", []) else None
        await websocket.accept(subprotocol=subprotocol)
        beta = "realtime=v1" in websocket.headers.get("openai-beta", "")
        session = Session(websocket, live, config, beta)
        if websocket.query_params.get("intent") != "transcription":
            await session.refuse("this server offers transcription sessions only: connect with "
                                 "?intent=transcription", code="unsupported_intent", close_code=CLOSE_POLICY)
            return
        lease = live.admit("realtime", client_key(websocket))
        if lease is None:
            await session.refuse(live.refusal(client_key(websocket)), code="too_many_streams",
                                 close_code=CLOSE_TRY_LATER, type=SERVER_ERROR)
            return
        try:
            await session.run(lease)
        except (WebSocketDisconnect, OSError, RuntimeError) as e:  # the client vanished mid-send
            log.info("realtime client gone: %s", type(e).__name__)
        finally:
            live.end(lease)

    return endpoint


class Session:
    """One realtime connection: its settings, the current item and the event loop."""

    def __init__(self, websocket: WebSocket, live: LiveStreams, config: RealtimeConfig, beta: bool) -> None:
        self.ws, self.live, self.config, self.beta = websocket, live, config, beta
        self.id = _new_id("sess")
        self.rate = DEFAULT_RATE
        self.transcription: Dict[str, Any] = {"model": config.model_id, "language": None, "prompt": ""}
        self.item_id: Optional[str] = None
        self.previous_item_id: Optional[str] = None
        self.item_samples = 0
        self.odd_byte = b""
        self.lease = Lease("realtime")  # replaced by run()'s
        self._event_ids = itertools.count()
        self.started = self.last_audio = time.monotonic()  # the idle timer counts audio only

    # ---- sending ---------------------------------------------------------------------------
    async def send(self, event: Dict[str, Any]) -> None:
        event = {"event_id": f"event_{self.id[5:13]}{next(self._event_ids)}", **event}
        await self.ws.send_text(json.dumps(event, ensure_ascii=False, separators=(",", ":")))

    async def error(self, e: EventError, client_event_id: Optional[str] = None) -> None:
        await self.send({"type": "error", "error": {"type": e.type, "code": e.code, "message": e.message,
                                                    "param": e.param, "event_id": client_event_id}})

    async def refuse(self, message: str, *, code: str, close_code: int, type: str = INVALID_REQUEST) -> None:
        try:
            await self.error(EventError(message, code=code, type=type))
            await self.ws.close(code=close_code, reason=code)
        except (WebSocketDisconnect, OSError, RuntimeError):
            pass

    def session_object(self, ga: bool) -> Dict[str, Any]:
        if ga:
            return {"object": "realtime.transcription_session", "type": "transcription", "id": self.id,
                    "audio": {"input": {"format": {"type": "audio/pcm", "rate": self.rate},
                                        "transcription": dict(self.transcription), "turn_detection": None,
                                        "noise_reduction": None}},
                    "include": None}
        return {"object": "realtime.transcription_session", "id": self.id, "input_audio_format": "pcm16",
                "input_audio_transcription": dict(self.transcription), "turn_detection": None,
                "input_audio_noise_reduction": None, "include": None, "modalities": ["text"]}

    # ---- the loop --------------------------------------------------------------------------
    async def run(self, lease: Lease) -> None:
        self.lease = lease
        created = "transcription_session.created" if self.beta else "session.created"
        await self.send({"type": created, "session": self.session_object(ga=not self.beta)})
        while True:
            now = time.monotonic()
            idle_left = self.last_audio + self.config.idle_seconds - now
            life_left = self.started + self.config.max_session_seconds - now
            try:
                message = await asyncio.wait_for(self.ws.receive(), timeout=max(0.0, min(idle_left, life_left)))
            except asyncio.TimeoutError:
                if life_left <= idle_left:
                    await self.refuse(f"the session reached this server's limit of "
                                      f"{self.config.max_session_seconds:g} s: closing it (open a new one)",
                                      code="session_expired", close_code=1000)
                else:
                    await self.refuse(f"no audio for {self.config.idle_seconds:g} s: closing the session",
                                      code="idle_timeout", close_code=1000)
                return
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                await self.error(EventError("binary frames are not events: send JSON text frames (audio goes "
                                            "base64 in input_audio_buffer.append)", code="invalid_frame"))
                continue
            await self.handle(text)

    async def handle(self, text: str) -> None:
        try:
            event = await self.live.run(json.loads, text) if len(text) > OFF_LOOP_CHARS else json.loads(text)
        except ValueError as e:
            await self.error(EventError(f"the event is not valid JSON: {e}", code="invalid_json"))
            return
        except RecursionError:  # deep nesting: a malformed event, not a vanished client
            await self.error(EventError("the event is nested too deeply", code="invalid_json"))
            return
        if not isinstance(event, dict):
            await self.error(EventError("an event must be a JSON object", code="invalid_json"))
            return
        client_id = event.get("event_id") if isinstance(event.get("event_id"), str) else None
        handler = HANDLERS.get(event.get("type"))  # type: ignore[arg-type]
        try:
            if handler is None:
                raise EventError(f"Invalid value: {event.get('type')!r}. Supported event types: "
                                 f"{', '.join(HANDLERS)}", code="invalid_value", param="type")
            await handler(self, event)
        except EventError as e:
            await self.error(e, client_id)
        except ParakeetError as e:  # the kind of failure decides the event's type and code
            answer = transcription_error(e)
            await self.error(EventError(answer.message, code=answer.code or "transcription_failed", param=answer.param,
                                        type=answer.type), client_id)

    # ---- events ----------------------------------------------------------------------------
    async def on_update(self, event: Dict[str, Any]) -> None:
        ga = event["type"] == "session.update"
        session = event.get("session")
        if not isinstance(session, dict):
            raise EventError("'session' must be an object", code="invalid_value", param="session")
        rate, transcription = (ga_settings if ga else beta_settings)(session, self.rate, self.transcription)
        self.rate, self.transcription = rate, transcription  # applies to items begun from now on
        await self.send({"type": "session.updated" if ga else "transcription_session.updated",
                         "session": self.session_object(ga)})

    async def on_append(self, event: Dict[str, Any]) -> None:
        audio = event.get("audio")
        if not isinstance(audio, str):
            raise EventError("'audio' must be a base64 string of PCM16 samples", code="invalid_value", param="audio")
        if len(audio) > (self.config.max_append_bytes + 2) // 3 * 4:
            raise EventError(f"an append may hold at most {self.config.max_append_bytes} bytes of audio; "
                             "send it in smaller appends", code="audio_too_large", param="audio")
        try:
            data = (await self.live.run(_b64decode, audio)) if len(audio) > OFF_LOOP_CHARS else _b64decode(audio)
        except (binascii.Error, ValueError) as e:
            raise EventError(f"'audio' is not valid base64: {e}", code="invalid_value", param="audio") from e
        data, self.odd_byte = self.odd_byte + data, b""
        if len(data) % 2:
            data, self.odd_byte = data[:-1], data[-1:]
        samples = np.frombuffer(data, dtype="<i2")
        item_samples = (self.item_samples if self.lease.stream is not None else 0) + samples.size
        if item_samples > self.config.max_audio_seconds * self.rate:
            self.odd_byte = b""
            raise EventError(f"an item may hold at most {self.config.max_audio_seconds:g} s of audio; commit or "
                             "clear it and go on in a new item", code="audio_too_long", param="audio")
        if self.lease.stream is None:
            await self.live.begin(self.lease, self.config.window, self.rate, self.transcription["language"])
            self.item_id, self.item_samples = _new_id("item"), 0
        self.item_samples += samples.size
        if samples.size:
            self.last_audio = time.monotonic()
        # A large append is fed in pieces: the library's working memory for a feed grows with
        # its length (a 15 MiB append is 5.5 min of audio), and other requests get the
        # backends between pieces.
        piece = int(FEED_PIECE_SECONDS * self.rate)
        for begin in range(0, max(samples.size, 1), piece):
            update = await self.live.feed(self.lease, samples[begin:begin + piece])
            await self.send_delta(update.text)

    async def on_commit(self, event: Dict[str, Any]) -> None:
        if self.lease.stream is None or self.item_samples == 0:
            raise EventError("Error committing input audio buffer: the buffer holds no audio",
                             code="input_audio_buffer_commit_empty")
        stream = self.lease.stream
        await self.send({"type": "input_audio_buffer.committed", "item_id": self.item_id,
                         "previous_item_id": self.previous_item_id})
        update = await self.live.feed(self.lease, None)
        await self.send_delta(update.text)
        seconds = round(self.item_samples / stream.sample_rate, 3)
        item_id = self.item_id
        self.end_item()
        self.previous_item_id = item_id
        await self.send({"type": "conversation.item.input_audio_transcription.completed", "item_id": item_id,
                         "content_index": 0, "transcript": stream.text,
                         "usage": {"type": "duration", "seconds": seconds}})

    async def on_clear(self, event: Dict[str, Any]) -> None:
        self.end_item()
        await self.send({"type": "input_audio_buffer.cleared"})

    async def send_delta(self, text: str) -> None:
        if text:
            await self.send({"type": "conversation.item.input_audio_transcription.delta", "item_id": self.item_id,
                             "content_index": 0, "delta": text})

    def end_item(self) -> None:
        self.live.close_stream(self.lease)
        self.item_id, self.item_samples, self.odd_byte = None, 0, b""


HANDLERS: Dict[str, Callable[[Session, Dict[str, Any]], Any]] = {
    "transcription_session.update": Session.on_update,
    "session.update": Session.on_update,
    "input_audio_buffer.append": Session.on_append,
    "input_audio_buffer.commit": Session.on_commit,
    "input_audio_buffer.clear": Session.on_clear,
}


# ---- session settings (checked in full before any is applied) ---------------------------------
def _unknown(d: Dict[str, Any], known: tuple, where: str) -> None:
    for key in d:
        if key not in known:
            raise EventError(f"Unknown parameter: '{where}.{key}'.", code="unknown_parameter", param=f"{where}.{key}")


def _must_be_null(d: Dict[str, Any], key: str, where: str, why: str) -> None:
    if d.get(key) not in (None, [], {}):
        raise EventError(f"{where}.{key} is not available here: {why}", code="unsupported_value",
                         param=f"{where}.{key}")


def _transcription(value: Any, current: Dict[str, Any], where: str) -> Dict[str, Any]:
    if value is None:
        return dict(current)
    if not isinstance(value, dict):
        raise EventError(f"'{where}' must be an object", code="invalid_value", param=where)
    _unknown(value, ("model", "language", "prompt"), where)
    out = dict(current)
    for key in ("model", "prompt"):
        if key in value:
            if not isinstance(value[key], str):
                raise EventError(f"'{where}.{key}' must be a string", code="invalid_value", param=f"{where}.{key}")
            out[key] = value[key]
    if "language" in value:
        language = value["language"]
        if language not in (None, "") and not (isinstance(language, str) and _LANGUAGE.match(language)):
            raise EventError(f"'{where}.language' must be an ISO-639-1 code such as 'en' or a locale such as "
                             f"'de-DE', not {language!r}",
                             code="invalid_value", param=f"{where}.language")
        out["language"] = language or None
    return out


def beta_settings(session: Dict[str, Any], rate: int, transcription: Dict[str, Any]):  # type: ignore[no-untyped-def]
    """``transcription_session.update``'s session → (sample rate, transcription settings)."""
    _unknown(session, ("input_audio_format", "input_audio_transcription", "turn_detection",
                       "input_audio_noise_reduction", "include", "modalities", "client_secret"), "session")
    fmt = session.get("input_audio_format", "pcm16")
    if fmt != "pcm16":
        raise EventError(f"input_audio_format {fmt!r} is not supported; send pcm16 (24 kHz mono)",
                         code="unsupported_value", param="session.input_audio_format")
    _must_be_null(session, "turn_detection", "session", "no voice activity detection; set it to null and commit")
    _must_be_null(session, "input_audio_noise_reduction", "session", "no noise reduction; set it to null")
    _must_be_null(session, "include", "session", "no log probabilities")
    return DEFAULT_RATE, _transcription(session.get("input_audio_transcription"), transcription,
                                        "session.input_audio_transcription")


def ga_settings(session: Dict[str, Any], rate: int, transcription: Dict[str, Any]):  # type: ignore[no-untyped-def]
    """``session.update``'s session (type "transcription") → (sample rate, transcription settings)."""
    _unknown(session, ("type", "audio", "include", "object", "id"), "session")
    if session.get("type", "transcription") != "transcription":
        raise EventError("this server offers transcription sessions only: session.type must be 'transcription'",
                         code="unsupported_value", param="session.type")
    _must_be_null(session, "include", "session", "no log probabilities")
    audio = session.get("audio") or {}
    if not isinstance(audio, dict):
        raise EventError("'session.audio' must be an object", code="invalid_value", param="session.audio")
    _unknown(audio, ("input",), "session.audio")
    given = audio.get("input") or {}
    if not isinstance(given, dict):
        raise EventError("'session.audio.input' must be an object", code="invalid_value", param="session.audio.input")
    _unknown(given, ("format", "transcription", "turn_detection", "noise_reduction"), "session.audio.input")
    _must_be_null(given, "turn_detection", "session.audio.input", "no voice activity detection; set it to null "
                                                                  "and commit")
    _must_be_null(given, "noise_reduction", "session.audio.input", "no noise reduction; set it to null")
    fmt = given.get("format")
    if fmt is not None:
        if not isinstance(fmt, dict) or fmt.get("type") != "audio/pcm":
            raise EventError(f"audio format {fmt!r} is not supported; send {{'type': 'audio/pcm', 'rate': 24000}}",
                             code="unsupported_value", param="session.audio.input.format")
        _unknown(fmt, ("type", "rate"), "session.audio.input.format")
        rate = fmt.get("rate", DEFAULT_RATE)
        if rate not in PCM_RATES or isinstance(rate, bool):
            raise EventError(f"audio/pcm rate {rate!r} is not supported; use 24000 (or 16000)",
                             code="unsupported_value", param="session.audio.input.format.rate")
    return int(rate), _transcription(given.get("transcription"), transcription, "session.audio.input.transcription")
