"""The server: a starlette application around one :class:`parakeet_py.Context`, run by uvicorn.

Endpoints (docs/server.md describes each): ``POST /v1/audio/transcriptions``,
``GET /v1/models``, ``GET /v1/models/{id}``, ``GET /health``, ``GET /metrics``, the realtime
WebSocket, LocalAI's ``POST /v1/voice/*`` (voice_api.py), and the page at ``/`` (page.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import io
import threading
import logging
import math
import os
import time
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute

from parakeet_py import Cancelled, ParakeetError
from parakeet_py.audio import prepare_audio
from parakeet_py.audio.formats import UPLOAD_CONTAINERS
from parakeet_py.speakers.encoder import AUDIO_RATE as VOICE_RATE

from ..stream_batching import stream_group
from . import batching, formats, page, request_fields, sse, upload_batching, voice_api
from .errors import SERVER_ERROR, APIError, AudioTooLong, BadAudio, error_response, transcription_error
from .clients import client_key
from .connections import ConnectionLimits, guarded_protocol
from .limits import (DEFAULT_BODY_TIMEOUT, DEFAULT_CLIENT_SHARE, DEFAULT_HEADER_TIMEOUT,
                     DEFAULT_MAX_APPEND_MB, DEFAULT_MAX_AUDIO_SECONDS, DEFAULT_MAX_BATCH, DEFAULT_MAX_CONNECTIONS,
                     DEFAULT_MAX_CONNECTIONS_PER_CLIENT, DEFAULT_MAX_QUEUE_WAIT, DEFAULT_MAX_SESSION_SECONDS,
                     DEFAULT_MAX_STREAMS, DEFAULT_MAX_UPLOAD_MB, DEFAULT_REALTIME_DIARIZE_LATENCY,
                     DEFAULT_REALTIME_WINDOW, DEFAULT_SHUTDOWN_TIMEOUT,
                     DEFAULT_SSE_WINDOW, DEFAULT_STREAM_IDLE_SECONDS, LOOPBACK_HOSTS, LOOPBACK_ORIGINS)
from .live import LiveStreams, Window
from .metrics import Metrics, RequestMetricsMiddleware
from .origins import HostOriginGuard
from .queue import Overloaded, TranscriptionQueue
from .realtime import RealtimeConfig, realtime_endpoint
from .turns import FairTurns
from .vad_settings import ServerVad
from .upload import ClientGone, read_form

log = logging.getLogger("parakeet.server")

# Most samples (frames x channels) one upload may decode to, per second of allowed audio: 48 kHz
# stereo. Compressed formats make tiny files of hours of audio (a 30 KB FLAC of silence holds
# 20 minutes), so the header is checked before anything is decoded, and the decoded length
# after every block (a header may understate it, or state nothing).
DECODED_SAMPLES_PER_SECOND = 48000 * 2


@dataclass(frozen=True)
class ServerConfig:
    model_id: str
    model_path: str
    api_key: Optional[str] = None
    max_upload_bytes: int = int(DEFAULT_MAX_UPLOAD_MB * 1024 * 1024)
    max_queue: int = 2
    # Seconds a request may wait for a worker before it is answered 503 (None: no bound).
    max_queue_wait: Optional[float] = DEFAULT_MAX_QUEUE_WAIT
    max_audio_seconds: float = DEFAULT_MAX_AUDIO_SECONDS
    # Live streams (SSE and realtime): how many at once, the (left, chunk, right) seconds of
    # each kind, how long a realtime connection may stay silent, the largest append.
    max_streams: int = DEFAULT_MAX_STREAMS
    # The stream group of the model's live streams (batching.py; 1: none).
    max_batch: int = DEFAULT_MAX_BATCH
    batch_wait_ms: Optional[int] = None  # None: the default for the model's kind (stream_batching.py)
    # Uploads per backend transcribed as one batch (upload_batching.py; 1: none). The command
    # line's default is DEFAULT_UPLOAD_BATCH.
    upload_batch: int = 1
    sse_window: Window = DEFAULT_SSE_WINDOW
    realtime_window: Window = DEFAULT_REALTIME_WINDOW
    # A cache-aware model's attention context for both kinds of live stream (None: its first).
    att_context: Optional[Tuple[int, int]] = None
    stream_idle_seconds: float = DEFAULT_STREAM_IDLE_SECONDS
    max_append_bytes: int = int(DEFAULT_MAX_APPEND_MB * 1024 * 1024)
    max_session_seconds: float = DEFAULT_MAX_SESSION_SECONDS
    # The latency preset of realtime sessions' diarization streams (transcription.speakers).
    realtime_diarize_latency: str = DEFAULT_REALTIME_DIARIZE_LATENCY
    # One client's (IP address's) share of the queue's places and of the live streams.
    client_share: float = DEFAULT_CLIENT_SHARE
    # Connections (enforced below the application: connections.py).
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_connections_per_client: int = DEFAULT_MAX_CONNECTIONS_PER_CLIENT
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    # Host headers and web origins answered (origins.py).
    trusted_hosts: Tuple[str, ...] = LOOPBACK_HOSTS
    allowed_origins: Tuple[str, ...] = LOOPBACK_ORIGINS
    shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT

    def limits(self) -> dict:
        """The limits a client may want to know before uploading (advertised by /health and
        /v1/models). The duration is checked from the file's header before anything is decoded
        and again after every decoded block; over either limit is answered 413."""
        return {"max_upload_bytes": self.max_upload_bytes, "max_audio_seconds": self.max_audio_seconds}

    def stream_limits(self) -> dict:
        """The live-stream limits (advertised by /health under "streams")."""
        return {"max_streams": self.max_streams, "max_append_bytes": self.max_append_bytes,
                "idle_seconds": self.stream_idle_seconds, "max_session_seconds": self.max_session_seconds,
                "client_share": self.client_share, "sse_window": list(self.sse_window),
                "realtime_window": list(self.realtime_window),
                **({} if self.att_context is None else {"att_context": list(self.att_context)})}


def check_audio_size(frames: int, sample_rate: int, channels: int, max_seconds: float) -> None:
    """Raises AudioTooLong for audio over ``max_seconds`` or too large to decode."""
    if sample_rate > 0 and frames / sample_rate > max_seconds:
        raise AudioTooLong(f"the audio is {frames / sample_rate:.1f} s long; this server's limit is "
                           f"{max_seconds:g} s (split longer recordings)")
    max_samples = int(max_seconds * DECODED_SAMPLES_PER_SECOND)
    if frames * channels > max_samples:
        raise AudioTooLong(f"the audio decodes to {frames} frames x {channels} channels, more than this server "
                           f"decodes for one request ({max_samples} samples); mix down or resample it first")


async def watch_disconnect(request: Request, gone: threading.Event) -> None:
    """Sets ``gone`` when the client goes away. The body has been read by then, so the next
    ASGI message is ``http.disconnect`` (the server sends it when the connection closes)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return


def create_app(context, config: ServerConfig, vad: Optional[Any] = None, diarizer=None,
               sound_tagger=None, voices=None) -> Starlette:
    """The ASGI application serving ``context`` (which the caller keeps and closes). ``vad``: a
    :class:`parakeet_py.Vad` for turn detection and ``chunking_strategy`` server_vad (None:
    neither is offered); ``diarizer`` (a parakeet_py.Diarizer, or None) for the speaker-labelled
    formats; ``sound_tagger`` (a parakeet_py.SoundTagger, or None) for verbose_json's
    ``sound_events``; ``voices`` (voices.Voices, or None) for named speakers in diarized_json
    and the /v1/voice endpoints."""
    backends = int(context.concurrency)
    sample_rate = int(context.info.get("sample_rate", 16000))
    metrics = Metrics(backends=backends, queue_limit=config.max_queue)
    # The backends' turns, shared by queued transcriptions and live streams' feeds (turns.py):
    # with upload batching, one per upload a backend serves at once.
    workers = backends * upload_batching.enable(context, config.upload_batch, config.batch_wait_ms)
    upload_batching.register(context, config.upload_batch, metrics.registry)
    turns = FairTurns(workers)
    queue = TranscriptionQueue(workers=workers, max_waiting=config.max_queue, metrics=metrics,
                               client_share=config.client_share, turns=turns, max_wait=config.max_queue_wait)
    group = stream_group(context, config.max_batch, config.batch_wait_ms)
    batching.register(group, metrics.registry)
    live = LiveStreams(context, config.max_streams, metrics, client_share=config.client_share, turns=turns,
                       group=group, att_context=config.att_context)
    # Set when the server stops and the requests in flight have had their time: every
    # transcription still running then stops at its next progress report.
    stopping = threading.Event()
    try:
        created = int(os.path.getmtime(config.model_path))
    except OSError:
        created = int(time.time())
    # "streaming": how live streams run on this model (buffered windows, or cache-aware with its
    # contexts and their chunk latencies; parakeet_capi_model_info_json)
    model_card = {"id": config.model_id, "object": "model", "created": created, "owned_by": "parakeet",
                  "limits": config.limits(), "streaming": context.info.get("streaming", {"mode": "buffered"})}
    if "languages" in context.info:  # a prompt model's locales (the `language` field picks one)
        model_card["languages"] = context.info["languages"]

    def check_api_key(request: Request) -> None:
        if config.api_key is None:
            return
        auth = request.headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise APIError(401, "missing API key: send 'Authorization: Bearer <key>'", code="missing_api_key",
                           headers={"WWW-Authenticate": "Bearer"})
        if not hmac.compare_digest(token.strip().encode(), config.api_key.encode()):
            raise APIError(401, "incorrect API key", code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"})

    def decode_audio(file, name: str, target_rate: int) -> Any:
        # Runs on a worker thread (blocking work). Only the upload containers and codecs are
        # decoded; the length limit is checked against the header, then after every block.
        file.seek(0)
        try:
            audio = prepare_audio(file, target_rate=target_rate, formats=UPLOAD_CONTAINERS,
                                  limit=lambda frames, rate, channels: check_audio_size(
                                      frames, rate, channels, config.max_audio_seconds))
        except AudioTooLong:
            raise
        except ParakeetError as e:
            raise BadAudio(f"could not read {name!r} as audio: {e}") from e
        if audio.size == 0:
            raise BadAudio("the audio file contains no samples")
        return audio

    def decode_upload(upload) -> Any:
        return decode_audio(upload.file, upload.filename or "the upload", sample_rate)

    def decode_voice(data: bytes, name: str) -> Any:
        # a /v1/voice request's audio, at the speaker encoder's rate (voice_api.py)
        return decode_audio(io.BytesIO(data), name, VOICE_RATE)

    def transcribe_job(upload, timestamps: bool, gone: threading.Event, beam: Optional[int] = None,
                       cut: Optional[ServerVad] = None, language: Optional[str] = None,
                       diarize: bool = False, sounds: bool = False, named: bool = False) -> Any:
        """(transcript, sound events or None). Runs on a worker thread: decoding, transcription and
        sound tagging are all blocking work."""
        audio = decode_upload(upload)

        def keep_going(_fraction: float) -> bool:
            # Every request stops at its next progress report once the client has gone or the
            # server stops.
            return not (gone.is_set() or stopping.is_set())

        metrics.backends_in_use.inc()
        try:
            # A language reaches a prompt model's prompt (the library refuses one it lacks); other
            # models ignore it.
            if named:
                # diarized_json with --voices: the library's named call, which reports no progress
                # (so a departed client or a stopping server does not cancel it midway)
                transcript = context.transcribe(audio, sample_rate=sample_rate, diarizer=diarizer,
                                                language=language, **voices.naming())
            elif diarize:
                # one library call, transcription then diarization; reports come from both stages
                # (the diarization's per encoder row chunk, or per chunk of a streaming checkpoint)
                transcript = context.transcribe(audio, sample_rate=sample_rate, diarizer=diarizer,
                                                language=language, progress=keep_going)
            elif cut is not None:
                # chunking_strategy server_vad: the speech segments only, each piece on its own
                # (docs/vad.md, "VAD-cut transcription"); its reports are the VAD's and each chunk's.
                transcript = context.transcribe(audio, sample_rate=sample_rate, timestamps=timestamps, vad=vad,
                                                vad_options=cut.cut_options(), language=language,
                                                progress=keep_going)
                metrics.vad_audio_seconds.labels("transcription").inc(audio.size / sample_rate)
            else:
                # beam search reports at every encoder frame too
                transcript = context.transcribe(audio, sample_rate=sample_rate, timestamps=timestamps, beam=beam,
                                                progress=keep_going, language=language)
            events = sound_tagger.events(audio, sample_rate) if sounds else None
        finally:
            metrics.backends_in_use.dec()
        metrics.audio_seconds.inc(audio.size / sample_rate)
        return transcript, events

    def overloaded(e: Overloaded) -> APIError:
        reason = e.reason or f"the server is busy ({queue.workers} transcribing, {config.max_queue} waiting)"
        return APIError(503, f"{reason}; retry after {e.retry_after} s", type=SERVER_ERROR, code="server_overloaded",
                        headers={"Retry-After": str(e.retry_after)})

    async def transcriptions(request: Request) -> Response:
        try:
            check_api_key(request)
            # A place in the queue before the body is read: uploads beyond the queue are refused
            # before they are received (and spooled to disk).
            ticket = queue.reserve(client_key(request))
        except APIError as e:
            return e.response()
        except Overloaded as e:
            return overloaded(e).response()
        try:
            try:
                # (a newcomer may take this place while the body arrives: Overloaded, below)
                form = await queue.hold(ticket, read_form(request, config.max_upload_bytes))
            except APIError as e:
                return e.response()
            except ClientGone:
                return error_response(400, "the client disconnected before sending the whole request",
                                      code="incomplete_request")
            try:
                return await _transcribe_form(request, form, ticket)
            finally:
                await form.close()
        except Overloaded as e:  # a newcomer took the place, or no worker was free in time
            return overloaded(e).response()
        finally:
            queue.release(ticket)  # unless run() took it (then the job's end gives it back)

    async def _transcribe_form(request: Request, form, ticket) -> Response:
        fields = request_fields.parse(form)
        if fields.stream:
            queue.release(ticket)  # a stream takes a stream slot instead
            return await _stream_form(fields, client_key(request))
        response_format, granularities, language, upload = (fields.response_format, fields.granularities,
                                                            fields.language, fields.upload)
        diarize = diarizer is not None and response_format in formats.DIARIZED_FORMATS
        if response_format == "diarized_json" and diarizer is None:
            raise APIError(400, "response_format 'diarized_json' needs a server started with --diarize-model",
                           param="response_format", code="unsupported_value")
        if diarize and fields.beam_size is not None:
            raise APIError(400, f"beam_size does not go with speaker labels ({response_format} on this server)",
                           param="beam_size", code="unsupported_value")

        gone = threading.Event()
        watcher = asyncio.ensure_future(watch_disconnect(request, gone))
        try:
            # json and text need no word/token times (the transcript's JSON is still built, for
            # the progress callback, but it is small).
            timestamps = response_format in ("verbose_json", "srt", "vtt")
            if fields.vad is not None and vad is None:
                raise APIError(400, "chunking_strategy server_vad: this server has no VAD model (start it with "
                                    "--vad-model, or install the silero-vad package); use chunking_strategy=auto",
                               param="chunking_strategy", code="unsupported_value")
            if diarize and fields.vad is not None:
                raise APIError(400, "chunking_strategy server_vad does not go with a diarized response_format",
                               param="chunking_strategy", code="unsupported_value")
            sounds = sound_tagger is not None and response_format == "verbose_json"
            named = response_format == "diarized_json" and voices is not None and voices.registry is not None
            transcript, events = await queue.run(lambda: transcribe_job(upload, timestamps, gone, fields.beam_size,
                                                                        fields.vad, language, diarize, sounds, named),
                                                 ticket)
        except Cancelled as e:
            metrics.cancelled.inc()
            if stopping.is_set() and not gone.is_set():
                log.info("request cancelled: the server is stopping")
                raise APIError(503, "the server is shutting down; retry on another one or later", type=SERVER_ERROR,
                               code="server_shutting_down", headers={"Retry-After": "5", "Connection": "close"}) from e
            log.info("request cancelled: the client disconnected")
            raise transcription_error(e) from e
        except ParakeetError as e:
            raise transcription_error(e) from e
        finally:
            watcher.cancel()

        if response_format == "json":
            return JSONResponse(formats.json_body(transcript))
        if response_format == "verbose_json":
            body = formats.verbose_json_body(transcript, granularities, language)
            if events is not None:
                body["sound_events"] = events
            return JSONResponse(body)
        if response_format == "diarized_json":
            return JSONResponse(formats.diarized_json_body(transcript))
        if response_format == "text":
            return PlainTextResponse(formats.text_body(transcript))
        if response_format == "srt":
            return PlainTextResponse(formats.srt_body(transcript))
        return PlainTextResponse(formats.vtt_body(transcript), media_type="text/vtt")

    async def _stream_form(fields: request_fields.TranscriptionRequest, client: str) -> Response:
        """stream=true: the file decoded chunk by chunk, answered as Server-Sent Events."""
        lease = live.admit("sse", client)
        if lease is None:
            raise streams_full(client)
        try:
            audio = await live.run(decode_upload, fields.upload)
            await live.begin(lease, config.sse_window, sample_rate, fields.language)
        except ParakeetError as e:
            live.end(lease)
            raise transcription_error(e) from e
        except BaseException:
            live.end(lease)
            raise
        piece = max(1, int(config.sse_window[1] * sample_rate))  # one chunk per feed: one delta each
        return StreamingResponse(sse.transcript_events(live, lease, audio, piece), media_type=sse.MEDIA_TYPE,
                                 headers=sse.HEADERS)

    def streams_full(client: str) -> APIError:
        return APIError(503, live.refusal(client), type=SERVER_ERROR, code="too_many_streams",
                        headers={"Retry-After": "1"})

    async def list_models(request: Request) -> Response:
        check_api_key(request)
        return JSONResponse({"object": "list", "data": [model_card]})

    async def get_model(request: Request) -> Response:
        check_api_key(request)
        if request.path_params["model"] != config.model_id:
            raise APIError(404, f"the model {request.path_params['model']!r} does not exist; this server has "
                                f"{config.model_id!r}", param="model", code="model_not_found")
        return JSONResponse(model_card)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "limits": config.limits(), "attention": context.attention,
                             "streams": {"open": live.open, **config.stream_limits()}})

    async def metrics_endpoint(request: Request) -> Response:
        return Response(metrics.exposition(), media_type=metrics.content_type)

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, APIError)
        return exc.response()

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return error_response(exc.status_code, str(exc.detail), headers=exc.headers)

    async def internal_error(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error serving %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal server error", type=SERVER_ERROR, code="internal_error")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        try:
            yield
        finally:
            stopping.set()  # whatever still runs stops at its next progress report
            queue.shutdown()
            live.shutdown()

    app = Starlette(
        routes=[
            Route("/v1/audio/transcriptions", transcriptions, methods=["POST"]),
            Route("/v1/models", list_models, methods=["GET"]),
            Route("/v1/models/{model:path}", get_model, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
            WebSocketRoute("/v1/realtime", realtime_endpoint(live, RealtimeConfig.from_server(
                config, vad=vad, end_of_utterance=bool(context.info.get("end_of_utterance")), diarizer=diarizer,
                voices=voices, tagger=sound_tagger),
                metrics)),
            *voice_api.routes(voices, check_api_key, decode_voice, config.max_upload_bytes),
            *page.routes(),
        ],
        exception_handlers={APIError: api_error, HTTPException: http_error, Exception: internal_error},
        lifespan=lifespan,
    )
    app.add_middleware(HostOriginGuard, trusted_hosts=config.trusted_hosts, allowed_origins=config.allowed_origins)
    app.add_middleware(RequestMetricsMiddleware, metrics=metrics)
    app.state.metrics = metrics
    app.state.stopping = stopping
    app.state.queue = queue
    app.state.live = live
    return app


# Seconds uvicorn waits beyond --shutdown-timeout for the cancelled requests to answer.
SHUTDOWN_ANSWER_SEC = 5


def serve(context, config: ServerConfig, *, host: str, port: int, log_level: str = "info",
          vad: Optional[Any] = None, diarizer=None, sound_tagger=None, voices=None) -> None:
    """Runs the server until SIGINT/SIGTERM (blocking)."""
    import uvicorn

    app = create_app(context, config, vad, diarizer, sound_tagger, voices)
    stopping: threading.Event = app.state.stopping

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # The requests in flight get --shutdown-timeout seconds; then each transcription
            # still running is cancelled (its answer: 503 server_shutting_down), and uvicorn
            # waits a few seconds more for those answers before it closes what is left.
            timer = asyncio.get_running_loop().call_later(config.shutdown_timeout, stopping.set)
            try:
                await super().shutdown(sockets)
            finally:
                timer.cancel()
                stopping.set()

    limits = ConnectionLimits(max_connections=config.max_connections,
                              max_per_client=config.max_connections_per_client,
                              header_timeout=config.header_timeout, body_timeout=config.body_timeout)
    uv_config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, access_log=log_level in ("info", "debug"),
        http=guarded_protocol(limits),
        timeout_graceful_shutdown=math.ceil(config.shutdown_timeout) + SHUTDOWN_ANSWER_SEC,
        ws="websockets",
        # A realtime append is base64 JSON: the frame limit is the append limit plus a third
        # and framing. One frame waits while one is handled (uvicorn's default queue is 32
        # frames: 640 MiB a session at the default append limit), and no per-message deflate:
        # it lets a few KB on the wire inflate to a 20 MiB frame.
        ws_max_size=config.max_append_bytes * 4 // 3 + 64 * 1024, ws_max_queue=1, ws_per_message_deflate=False)
    server = Server(uv_config)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    if not server.started:  # could not bind the port, for one: uvicorn has logged why
        raise SystemExit(3)
