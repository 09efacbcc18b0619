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
the point of streaming.

Turn detection (``turn_detection``; docs/server.md, "Turn detection"): ``server_vad`` (the
default, as OpenAI's, when the server has a VAD model) finds the turns with the Silero VAD and
commits each itself: ``input_audio_buffer.speech_started`` (``audio_start_ms``: the turn's
first sample, its prefix padding included), deltas while it is spoken,
``input_audio_buffer.speech_stopped`` (``audio_end_ms``: its last, its closing silence
included), ``committed``, ``completed``. ``semantic_vad`` (models whose vocabulary has <EOU>)
ends a turn at the model's end-of-utterance token, or after the eagerness's silence. ``null``:
the client commits. ``transcription.speakers: true`` (an extension; servers with
``--diarize-model``) adds speakers to each completed item: its ``words`` and ``segments``
(realtime_speakers.py; named with ``--voices``); ``transcription.sounds: true`` (servers with
``--sound-model``) sends sound events while the audio flows (realtime_sounds.py). Settings the
engine cannot honour (noise reduction, logprobs, g711 audio) are refused with an ``error``
event, as is every malformed event; the session stays open after an error.

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
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
from starlette.websockets import WebSocket, WebSocketDisconnect

from parakeet_py import ParakeetError, StreamUpdate, Word

from .clients import client_key
from .errors import INVALID_REQUEST, SERVER_ERROR, transcription_error
from .live import Lease, LiveStreams, Window
from .metrics import Metrics
from .limits import DEFAULT_REALTIME_DIARIZE_LATENCY
from .realtime_sounds import SessionSounds
from .realtime_speakers import SessionSpeakers, open_segments
from .speech_turns import SpeechTurns, ms
from .vad_settings import ServerVad, parse_server_vad

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
# semantic_vad's eagerness → the silence after which a turn ends without an <EOU> (OpenAI's
# "max timeouts": low 8 s, medium 4 s, high 2 s; auto is medium).
EAGERNESS_SILENCE_MS = {"low": 8000, "medium": 4000, "auto": 4000, "high": 2000}


@dataclass(frozen=True)
class RealtimeConfig:
    model_id: str
    api_key: Optional[str]
    window: Window
    idle_seconds: float
    max_append_bytes: int
    max_audio_seconds: float = float("inf")
    max_session_seconds: float = float("inf")
    vad: Optional[Any] = None  # the server's parakeet_py.Vad (None: no turn detection)
    end_of_utterance: bool = False  # the model decodes <EOU> (semantic_vad)
    diarizer: Optional[Any] = None  # the server's parakeet_py.Diarizer (None: no speakers)
    diarize_latency: str = DEFAULT_REALTIME_DIARIZE_LATENCY  # its streams' latency preset
    voices: Optional[Any] = None  # the server's voices.Voices (with a registry: named speakers)
    tagger: Optional[Any] = None  # the server's parakeet_py.SoundTagger (None: no sound events)

    @classmethod
    def from_server(cls, config: Any, vad: Optional[Any] = None, end_of_utterance: bool = False,
                    diarizer: Optional[Any] = None, voices: Optional[Any] = None,
                    tagger: Optional[Any] = None) -> "RealtimeConfig":
        return cls(model_id=config.model_id, api_key=config.api_key, window=config.realtime_window,
                   idle_seconds=config.stream_idle_seconds, max_append_bytes=config.max_append_bytes,
                   max_audio_seconds=config.max_audio_seconds, max_session_seconds=config.max_session_seconds,
                   vad=vad, end_of_utterance=end_of_utterance, diarizer=diarizer,
                   diarize_latency=config.realtime_diarize_latency, voices=voices, tagger=tagger)


@dataclass(frozen=True)
class SemanticVad:
    eagerness: str = "auto"

    def to_dict(self) -> Dict[str, Any]:
        return {"type": "semantic_vad", "eagerness": self.eagerness}

    def detector_settings(self) -> ServerVad:
        """Silero finds the starts; its end (after the eagerness's silence) is the fallback."""
        return ServerVad(silence_duration_ms=EAGERNESS_SILENCE_MS[self.eagerness])


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
        session = Session(websocket, live, config, beta, metrics)
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
            session.stop_speakers()
            session.stop_sounds()
            live.end(lease)

    return endpoint


class Session:
    """One realtime connection: its settings, the current item and the event loop."""

    def __init__(self, websocket: WebSocket, live: LiveStreams, config: RealtimeConfig, beta: bool,
                 metrics: Metrics) -> None:
        self.ws, self.live, self.config, self.beta, self.metrics = websocket, live, config, beta, metrics
        self.id = _new_id("sess")
        self.rate = DEFAULT_RATE
        self.transcription: Dict[str, Any] = {"model": config.model_id, "language": None, "prompt": ""}
        self.item_id: Optional[str] = None
        self.previous_item_id: Optional[str] = None
        self.item_samples = 0
        self.odd_byte = b""
        self.lease = Lease("realtime")  # replaced by run()'s
        # Turn detection: OpenAI's default (server_vad) when the server has a VAD model.
        self.turn_detection: Optional[Any] = ServerVad() if config.vad is not None else None
        self.turns: Optional[SpeechTurns] = None  # made at the first append under turn detection
        self.in_speech = False  # the VAD is inside a speech segment
        self.announced = False  # the open item's speech_started was sent
        self.item_begin = self.fed_to = self.last_turn_end = 0  # positions on the turns' timeline
        # Speakers (transcription.speakers): the session's diarization, the open item's start on
        # its timeline and the item's words; under turn detection, the turns' position up to
        # which the diarizer has the audio.
        self.speakers: Optional[SessionSpeakers] = None
        self.item_speakers: Optional[Tuple[SessionSpeakers, float]] = None
        self.item_words: List[Word] = []
        self.diarized_to = 0
        self.sounds: Optional[SessionSounds] = None  # transcription.sounds: the session's sound stream
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
                                        "transcription": dict(self.transcription),
                                        "turn_detection": self.turn_detection_object(),
                                        "noise_reduction": None}},
                    "include": None}
        return {"object": "realtime.transcription_session", "id": self.id, "input_audio_format": "pcm16",
                "input_audio_transcription": dict(self.transcription),
                "turn_detection": self.turn_detection_object(),
                "input_audio_noise_reduction": None, "include": None, "modalities": ["text"]}

    def turn_detection_object(self) -> Optional[Dict[str, Any]]:
        return None if self.turn_detection is None else self.turn_detection.to_dict()

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
        given = ((session.get("audio") or {}).get("input") or {}) if ga else session
        where = "session.audio.input.turn_detection" if ga else "session.turn_detection"
        turn_detection = (self.parse_turn_detection(given["turn_detection"], where) if "turn_detection" in given
                          else self.turn_detection)
        detector_changes = turn_detection != self.turn_detection or rate != self.rate
        if detector_changes and self.turns is not None:
            await self.diarize_turns(self.turns.end)  # the diarizer hears the old detector's audio to its end
        speakers, sounds = transcription.get("speakers", False), transcription.get("sounds", False)
        field = "session.audio.input.transcription" if ga else "session.input_audio_transcription"
        # The last checks: they may fail, and then nothing is applied.
        new_sounds = await self.start_sounds(rate, field + ".sounds") if sounds and self.sounds is None else None
        started = None
        try:
            if speakers and self.speakers is None:
                started = await self.start_speakers(rate, field + ".speakers")
        except EventError:
            if new_sounds is not None:
                self.stop_sounds(new_sounds)
            raise
        if new_sounds is not None:
            self.sounds = new_sounds
        elif not sounds:
            self.stop_sounds()
        if self.sounds is not None:
            self.sounds.set_rate(rate)
        if detector_changes:
            self.stop_detector()  # the next append starts one with the new settings
        if started is not None:
            self.speakers, self.diarized_to = started, self.turns.end if self.turns is not None else 0
        elif not speakers:
            self.stop_speakers()
        if self.speakers is not None:
            self.speakers.set_rate(rate)
        self.rate, self.transcription = rate, transcription  # applies to items begun from now on
        self.turn_detection = turn_detection
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
        if self.turn_detection is not None:
            if samples.size:
                self.last_audio = time.monotonic()
            await self.hear_sounds(samples)
            await self.append_turns(samples)
            return
        item_samples = (self.item_samples if self.lease.stream is not None else 0) + samples.size
        if item_samples > self.config.max_audio_seconds * self.rate:
            self.odd_byte = b""
            raise EventError(f"an item may hold at most {self.config.max_audio_seconds:g} s of audio; commit or "
                             "clear it and go on in a new item", code="audio_too_long", param="audio")
        if self.lease.stream is None:
            await self.live.begin(self.lease, self.config.window, self.rate, self.transcription["language"])
            self.item_id, self.item_samples = _new_id("item"), 0
            self.begin_item_speakers(0)
        self.item_samples += samples.size
        if samples.size:
            self.last_audio = time.monotonic()
        # A large append is fed in pieces: the library's working memory for a feed grows with
        # its length (a 15 MiB append is 5.5 min of audio), and other requests get the
        # backends between pieces.
        piece = int(FEED_PIECE_SECONDS * self.rate)
        for begin in range(0, max(samples.size, 1), piece):
            update = await self.feed_stream(samples[begin:begin + piece])
            await self.send_delta(update.text)
        await self.diarize(samples)
        await self.hear_sounds(samples)

    async def on_commit(self, event: Dict[str, Any]) -> None:
        if self.lease.stream is None or self.item_samples == 0:
            raise EventError("Error committing input audio buffer: the buffer holds no audio",
                             code="input_audio_buffer_commit_empty")
        await self.commit()

    async def commit(self, speech_stopped_ms: Optional[int] = None) -> None:
        """Ends the open item: [speech_stopped,] committed, the last delta, completed. Under
        turn detection an item that was never announced and decoded nothing is dropped
        without a word (the audio after an <EOU> or a manual commit that held no speech)."""
        stream = self.lease.stream
        assert stream is not None
        if speech_stopped_ms is not None and not self.announced:
            update = await self.feed_stream(None)
            if not (stream.text or update.text):
                self.end_item()
                return
            await self.announce()
            pending = update.text
        else:
            pending = None
        if speech_stopped_ms is not None:
            await self.send({"type": "input_audio_buffer.speech_stopped", "audio_end_ms": speech_stopped_ms,
                             "item_id": self.item_id})
        await self.send({"type": "input_audio_buffer.committed", "item_id": self.item_id,
                         "previous_item_id": self.previous_item_id})
        if pending is None:
            pending = (await self.feed_stream(None)).text
        await self.send_delta(pending)
        seconds = round(self.item_samples / stream.sample_rate, 3)
        item_id = self.item_id
        speakers = await self.item_speaker_keys(self.item_samples / stream.sample_rate)
        self.end_item()
        self.previous_item_id = item_id
        await self.send({"type": "conversation.item.input_audio_transcription.completed", "item_id": item_id,
                         "content_index": 0, "transcript": stream.text,
                         "usage": {"type": "duration", "seconds": seconds}, **speakers})

    async def on_clear(self, event: Dict[str, Any]) -> None:
        self.end_item()
        await self.send({"type": "input_audio_buffer.cleared"})

    async def send_delta(self, text: str) -> None:
        if text:
            if not self.announced and self.turns is not None:
                await self.announce()
            await self.send({"type": "conversation.item.input_audio_transcription.delta", "item_id": self.item_id,
                             "content_index": 0, "delta": text})

    def end_item(self) -> None:
        self.live.close_stream(self.lease)
        self.item_id, self.item_samples, self.odd_byte = None, 0, b""
        self.announced = False
        self.item_speakers, self.item_words = None, []
        if self.turns is not None:
            self.last_turn_end = self.fed_to

    async def feed_stream(self, samples: Optional[np.ndarray]) -> StreamUpdate:
        """Feeds the open item's stream (None: finalizes it), keeping its words for speakers."""
        update = await self.live.feed(self.lease, samples)
        if self.item_speakers is not None:
            self.item_words += update.words
        return update

    # ---- speakers (realtime_speakers.py) ---------------------------------------------------
    async def start_speakers(self, rate: int, param: str) -> SessionSpeakers:
        diarizer = self.config.diarizer
        if diarizer is None:
            raise EventError(f"{param}: this server has no diarization model; start it with --diarize-model",
                             code="unsupported_value", param=param)
        try:
            segments = await self.live.run(open_segments, diarizer, self.config.diarize_latency, self.config.voices)
        except ParakeetError as e:  # a model that cannot stream (per_feature normalisation)
            raise EventError(f"{param}: this server's diarization model cannot diarize live: {e}",
                             code="unsupported_value", param=param) from e
        self.metrics.speaker_streams.inc()
        return SessionSpeakers(segments, rate)

    def stop_speakers(self) -> None:
        """Frees the session's diarization stream (once a feed running on it is over)."""
        speakers, self.speakers, self.item_speakers = self.speakers, None, None
        if speakers is not None:
            self.close_counted(speakers, self.metrics.speaker_streams)

    def close_counted(self, stream: Any, gauge: Any) -> None:
        """Frees a session's ``stream`` once a feed running on it is over; ``gauge`` counts it closed."""
        def close() -> None:
            try:
                stream.close()
            finally:
                gauge.dec()
        self.live.close_later(close)

    def begin_item_speakers(self, samples_back: int) -> None:
        """The item opening now starts ``samples_back`` samples before what the diarizer has."""
        self.item_words = []
        self.item_speakers = None if self.speakers is None else (self.speakers,
                                                                 self.speakers.seconds_at(-samples_back))

    async def diarize(self, samples: np.ndarray) -> None:
        """Appends ``samples`` to the diarizer's timeline; its chunks run one backend turn each."""
        speakers = self.speakers
        if speakers is None or samples.size == 0:
            return
        pcm = await self.live.run(speakers.resample, samples)
        for begin in range(0, pcm.size, speakers.chunk_samples):
            await self.live.compute(self.lease, speakers.diarize, pcm[begin:begin + speakers.chunk_samples])

    async def diarize_turns(self, last: int) -> None:
        """Under turn detection: the diarizer gets the turns' audio up to ``last``. It is kept at
        the open item's end, so that at a commit it has heard exactly the item's audio and no
        more (its result then depends on the audio alone, not on how it was cut into appends)."""
        if self.speakers is None or self.turns is None or last <= self.diarized_to:
            return
        # (the diarizer is never behind the kept audio: it lags the turns by one piece at most)
        audio = self.turns.audio(self.diarized_to, last)
        self.diarized_to = last
        await self.diarize(audio)

    async def item_speaker_keys(self, item_seconds: float) -> Dict[str, Any]:
        """The completed event's ``words`` and ``segments`` for the item ending now; none when
        the item began before speakers were turned on (or with a diarizer since replaced)."""
        if self.item_speakers is None or self.item_speakers[0] is not self.speakers:
            return {}
        speakers, start = self.item_speakers
        keys = await self.live.run(speakers.attribute, self.item_words, start)
        speakers.forget(start + item_seconds)  # the next item starts after this one ends
        return keys

    # ---- sounds (realtime_sounds.py) ---------------------------------------------------------
    async def start_sounds(self, rate: int, param: str) -> SessionSounds:
        tagger = self.config.tagger
        if tagger is None:
            raise EventError(f"{param}: this server has no sound model; start it with --sound-model",
                             code="unsupported_value", param=param)
        sounds = await self.live.run(SessionSounds, tagger, rate)
        self.metrics.sound_streams.inc()
        return sounds

    def stop_sounds(self, sounds: Optional[SessionSounds] = None) -> None:
        """Frees ``sounds`` (default: the session's, which it then has no more) once a feed
        running on it is over."""
        if sounds is None:
            sounds, self.sounds = self.sounds, None
        if sounds is not None:
            self.close_counted(sounds, self.metrics.sound_streams)

    async def hear_sounds(self, samples: np.ndarray) -> None:
        """Appends ``samples`` to the sound stream's timeline, a hop per backend turn, and sends
        the events of what opened and closed."""
        sounds = self.sounds
        if sounds is None or samples.size == 0:
            return
        pcm = await self.live.run(sounds.resample, samples)
        for begin in range(0, pcm.size, sounds.piece_samples):
            for event in await self.live.compute(self.lease, sounds.hear, pcm[begin:begin + sounds.piece_samples]):
                await self.send(event)

    # ---- turn detection --------------------------------------------------------------------
    def parse_turn_detection(self, value: Any, where: str) -> Optional[Any]:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise EventError(f"'{where}' must be an object or null", code="invalid_value", param=where)
        kind = value.get("type", "server_vad")
        if kind not in ("server_vad", "semantic_vad"):
            raise EventError(f"{where}.type must be 'server_vad', 'semantic_vad' or the whole field null, not "
                             f"{kind!r}", code="invalid_value", param=f"{where}.type")
        if self.config.vad is None:
            raise EventError(f"{where}: this server has no VAD model (start it with --vad-model, or install the "
                             "silero-vad package); set turn_detection to null and commit", code="unsupported_value",
                             param=where)
        # Transcription sessions have no responses to create or interrupt: those flags change nothing.
        flags = ("create_response", "interrupt_response")
        for key in flags:
            if key in value and not isinstance(value[key], bool):
                raise EventError(f"'{where}.{key}' must be true or false", code="invalid_value",
                                 param=f"{where}.{key}")
        if value.get("idle_timeout_ms") is not None:
            raise EventError(f"{where}.idle_timeout_ms is not available here: a transcription session has no "
                             "responses to trigger", code="unsupported_value", param=f"{where}.idle_timeout_ms")
        if kind == "server_vad":
            _unknown(value, ("type", "threshold", "prefix_padding_ms", "silence_duration_ms", "idle_timeout_ms")
                     + flags, where)

            def fail(param: str, message: str) -> EventError:
                return EventError(message, code="invalid_value", param=param)
            return parse_server_vad({k: v for k, v in value.items() if k != "idle_timeout_ms"}, where, fail,
                                    extra_keys=flags)
        _unknown(value, ("type", "eagerness", "idle_timeout_ms") + flags, where)
        if not self.config.end_of_utterance:
            raise EventError(f"{where}: semantic_vad needs a model that decodes end-of-utterance (<EOU>) tokens, "
                             "and this one does not; use server_vad", code="unsupported_value", param=where)
        eagerness = value.get("eagerness") or "auto"
        if eagerness not in EAGERNESS_SILENCE_MS:
            raise EventError(f"{where}.eagerness must be one of low, medium, high, auto, not {eagerness!r}",
                             code="invalid_value", param=f"{where}.eagerness")
        return SemanticVad(eagerness)

    def stop_detector(self) -> None:
        if self.turns is not None:
            self.turns.close()
        self.turns, self.in_speech = None, False
        self.fed_to = self.last_turn_end = self.item_begin = 0

    async def append_turns(self, samples: np.ndarray) -> None:
        """An append under turn detection: the VAD's events cut the audio into turns, each
        fed to its own item's stream."""
        if self.turns is None:
            settings = self.turn_detection
            if isinstance(settings, SemanticVad):
                settings = settings.detector_settings()
            self.turns = SpeechTurns(self.config.vad, self.rate, settings, self.config.max_audio_seconds)
            self.diarized_to = 0
        turns = self.turns
        kind = self.turn_detection.to_dict()["type"]
        piece = int(FEED_PIECE_SECONDS * self.rate)
        for begin in range(0, samples.size, piece):
            before, computed = turns.vad_seconds, turns.compute_seconds
            events = await self.live.run(turns.feed, samples[begin:begin + piece])
            self.metrics.vad_compute_seconds.labels("realtime").inc(turns.compute_seconds - computed)
            self.metrics.vad_audio_seconds.labels("realtime").inc(turns.vad_seconds - before)
            for event, at in events:
                if event == "start":
                    self.in_speech = True
                    if self.lease.stream is None:
                        await self.open_item(turns.turn_start(at, self.last_turn_end))
                    if not self.announced:
                        await self.announce()
                else:
                    self.in_speech = False
                    if self.lease.stream is not None:
                        end = max(turns.turn_end(at), self.fed_to)
                        await self.feed_item(end)
                        if self.lease.stream is not None:  # an <EOU> may have ended it
                            self.metrics.turns.labels(kind).inc()
                            await self.commit(speech_stopped_ms=ms(end, self.rate))
                        self.last_turn_end = end
            if self.lease.stream is None and self.in_speech:
                # speech goes on after a manual commit, a clear or an <EOU>: a new item takes it
                await self.open_item(max(self.fed_to, self.last_turn_end))
            if self.lease.stream is not None:
                await self.feed_item(turns.heard)
            await self.diarize_turns(turns.end if self.lease.stream is None else self.fed_to)
            turns.forget()

    async def open_item(self, first: int) -> None:
        await self.live.begin(self.lease, self.config.window, self.rate)
        self.item_id, self.item_samples, self.announced = _new_id("item"), 0, False
        self.item_begin = self.fed_to = first
        self.begin_item_speakers(self.diarized_to - first)

    async def announce(self) -> None:
        self.announced = True
        await self.send({"type": "input_audio_buffer.speech_started", "audio_start_ms": ms(self.item_begin, self.rate),
                         "item_id": self.item_id})

    async def feed_item(self, last: int) -> None:
        """Feeds the open item the timeline's audio up to ``last``; under semantic_vad, an
        <EOU> in what it decodes commits the item there."""
        assert self.turns is not None
        await self.diarize_turns(last)
        audio = self.turns.audio(self.fed_to, last)
        self.fed_to = max(self.fed_to, last)
        if audio.size == 0:
            return
        self.item_samples += audio.size
        update = await self.feed_stream(audio)
        await self.send_delta(update.text)
        if isinstance(self.turn_detection, SemanticVad) and any(e.type == "eou" for e in update.events):
            eou = next(e for e in update.events if e.type == "eou")
            self.metrics.turns.labels("semantic_vad").inc()
            await self.commit(speech_stopped_ms=ms(self.item_begin + int(round(eou.time * self.rate)), self.rate))


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
    _unknown(value, ("model", "language", "prompt", "speakers", "sounds"), where)
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
    # Extensions, echoed while true: speakers on each completed item, sound events as they happen.
    for key in ("speakers", "sounds"):
        if key in value:
            if not isinstance(value[key], bool):
                raise EventError(f"'{where}.{key}' must be true or false", code="invalid_value", param=f"{where}.{key}")
            out.pop(key, None)
            if value[key]:
                out[key] = True
    return out


def beta_settings(session: Dict[str, Any], rate: int, transcription: Dict[str, Any]):  # type: ignore[no-untyped-def]
    """``transcription_session.update``'s session → (sample rate, transcription settings)."""
    _unknown(session, ("input_audio_format", "input_audio_transcription", "turn_detection",
                       "input_audio_noise_reduction", "include", "modalities", "client_secret"), "session")
    fmt = session.get("input_audio_format", "pcm16")
    if fmt != "pcm16":
        raise EventError(f"input_audio_format {fmt!r} is not supported; send pcm16 (24 kHz mono)",
                         code="unsupported_value", param="session.input_audio_format")
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
